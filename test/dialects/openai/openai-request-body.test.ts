import t from 'tap';
import { openaiDialect, openaiRequestBody, reasoningModelBody } from '../../../src/dialects/openai/index.js';
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

t.test('a chat body is edited in one walk exactly as the scan and edit would, gated fields refused alike', async (t) => {
  const fields = [
    '"model":"mock/gpt-4o"', '"mod\\u0065l":"x"', '"messages":[{"role":"user","content":"model"}]', '"stream":true', '"stream_options":null',
    '"stream_options":{"include_usage":false}', '"stream_\\u006fptions":{}', '"service_tier":"flex"', '"service_tier":"priority"', '"service_tier":null',
    '"web_search_options":{}', '"web_search_options":null', '"temperature":0.50', '"x":{"stream_options":1}',
  ];
  let seed = 11;
  const pick = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 8) % n;
  let refused = 0;
  for (let n = 0; n < 400; n++) {
    const text = `{${Array.from({ length: 1 + pick(6) }, () => fields[pick(fields.length)]).join(pick(2) ? ',' : ' , ')}}`;
    const call: OutgoingCall = {
      text,
      body: JSON.parse(text) as ChatCompletionRequest,
      upstreamModel: 'gpt-"4o"',
      maxOutputTokens: null,
      reasoning: 'none',
      requestStreamUsage: pick(2) === 1,
      allowedFields: pick(3) === 0 ? ['service_tier'] : [],
    };
    const outcome = (build: (call: OutgoingCall) => string) => {
      try {
        return build(call);
      } catch (error) {
        return `refused: ${(error as Error).message}`;
      }
    };
    const walked = outcome(openaiRequestBody);
    if (walked.startsWith('refused')) refused++;
    t.equal(walked, outcome(reasoningModelBody), `${text}, usage ${call.requestStreamUsage}, allowed ${call.allowedFields.join()}`);
  }
  t.ok(refused > 50 && refused < 350, `some bodies refused, most not (${refused} of 400)`);
});
