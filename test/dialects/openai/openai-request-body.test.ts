import t from 'tap';
import { openaiDialect } from '../../../src/dialects/openai/index.js';
import type { OutgoingCall } from '../../../src/dialects/dialect.js';
import type { ChatCompletionRequest } from '../../../src/generated/types/chat-completion-request.js';

/** The body of the call; the path is always chat/completions. */
function bodyOf(call: OutgoingCall): string {
  const { path, body, headers } = openaiDialect.buildRequest(call);
  if (path !== 'chat/completions' || headers !== undefined) throw new Error(`unexpected request ${path}`);
  return body;
}

/** The body sent upstream for `text` when the gateway asks for usage (the caller did not). */
function askingForUsage(text: string): string {
  const body = JSON.parse(text) as ChatCompletionRequest;
  return bodyOf({ text, body, upstreamModel: 'gpt-4o', maxOutputTokens: null, reasoning: 'none', requestStreamUsage: true, allowedFields: [] });
}

const HEAD = '{"model":"mock/gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true';

t.test('stream_options: only include_usage changes, everything else reaches the provider as written (issue 10, item 10)', async (t) => {
  const cases: [string, string, string][] = [
    ['absent: added first', `${HEAD}}`, '{"stream_options":{"include_usage":true},"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true}'],
    ['null', `${HEAD},"stream_options":null}`, `${HEAD.replace('mock/gpt-4o', 'gpt-4o')},"stream_options":{"include_usage":true}}`],
    [
      'numbers, key order and spacing kept; include_usage added first',
      `${HEAD},"stream_options": { "z" : [1.0, 1E2], "a":{"seed":12345678901234567890,"t":-0.0} } }`,
      `${HEAD.replace('mock/gpt-4o', 'gpt-4o')},"stream_options": {"include_usage":true, "z" : [1.0, 1E2], "a":{"seed":12345678901234567890,"t":-0.0} } }`,
    ],
    [
      'include_usage false set in place',
      `${HEAD},"stream_options":{"include_obfuscation":false,"include_usage":false,"x":1.50}}`,
      `${HEAD.replace('mock/gpt-4o', 'gpt-4o')},"stream_options":{"include_obfuscation":false,"include_usage":true,"x":1.50}}`,
    ],
    [
      'escaped and duplicated keys: every copy a parser could keep',
      `${HEAD},"stream_options":{"include\\u005fusage":false,"include_usage":0},"stream_options":{"include_usage":null}}`,
      `${HEAD.replace('mock/gpt-4o', 'gpt-4o')},"stream_options":{"include\\u005fusage":true,"include_usage":true},"stream_options":{"include_usage":true}}`,
    ],
  ];
  for (const [name, text, expected] of cases) t.equal(askingForUsage(text), expected, name);
});

t.test('stream_options nested 20,000 deep goes through byte for byte', async (t) => {
  const deep = `{"x":${'{"a":'.repeat(20_000)}1.0${'}'.repeat(20_000)},"y":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const text = `${HEAD},"stream_options":${deep}}`;
  t.equal(askingForUsage(text), `${HEAD.replace('mock/gpt-4o', 'gpt-4o')},"stream_options":{"include_usage":true,${deep.slice(1)}}`);
});

t.test('without the gateway asking, stream_options is not touched at all', async (t) => {
  const text = `${HEAD},"stream_options":{"include_usage":false,"n":1.0}}`;
  const body = JSON.parse(text) as ChatCompletionRequest;
  t.equal(
    bodyOf({ text, body, upstreamModel: 'gpt-4o', maxOutputTokens: null, reasoning: 'none', requestStreamUsage: false, allowedFields: [] }),
    text.replace('mock/gpt-4o', 'gpt-4o'),
  );
});
