// /v1/responses and /v1/messages answer with one answer: a stream whose provider sends several choices (a Gemini
// stream with candidates at indexes 0 to 3, though these endpoints never ask for candidateCount) is answered with
// choice 0 alone. Before, every candidate's text was run together into one answer ("threeonezerotwo") and the
// last candidate's finish reason stood for it.
import t from 'tap';
import { PROVIDER_KEY, startGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { startEventStream } from '../helpers/sse-upstream.js';

const ROUTES = `version: 1
providers:
  gem: { dialect: gemini, base_url: http://127.0.0.1:9/v1beta, base_url_env: GEM_URL, api_key_env: MOCK_API_KEY }
models:
  gem/m: { upstream_model: gemini-m, max_output_tokens: 8192 }
errors:
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
const record = (candidates: unknown[]) => `data: ${JSON.stringify({ candidates, usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } })}\r\n\r\n`;
const candidate = (index: number, text: string, finishReason?: string) => ({ index, content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) });
// Out of order, the last to finish (index 3) cut at its token limit.
const STREAM = [
  record([candidate(3, 'three'), candidate(1, 'one'), candidate(0, 'zero')]),
  record([candidate(2, 'two', 'STOP'), candidate(0, '!', 'STOP'), candidate(1, '', 'STOP'), candidate(3, '', 'MAX_TOKENS')]),
].join('');

t.test('several candidates in a stream: /v1/responses and /v1/messages answer with candidate 0 alone', async (t) => {
  const provider = await startMockUpstream((_request, res) => {
    startEventStream(res);
    res.end(STREAM);
  });
  t.teardown(() => provider.close());
  const gateway = await startGateway({ routes: ROUTES, env: { GEM_URL: `${provider.origin}/v1beta`, MOCK_API_KEY: PROVIDER_KEY } });
  t.teardown(() => gateway.close());
  const post = (path: string, body: unknown) => fetch(`${gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });

  const responses = await post('/v1/responses', { model: 'gem/m', input: 'hi', stream: true });
  t.equal(responses.status, 200);
  const events = (await responses.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  const completed = events.find((event) => event['type'] === 'response.completed') as { response: { status: string; output: { content: { text: string }[] }[] } } | undefined;
  t.equal(completed?.response.status, 'completed', 'finished as candidate 0 did, not cut as candidate 3 was');
  t.equal(completed?.response.output[0]?.content[0]?.text, 'zero!');

  const messages = await post('/v1/messages', { model: 'gem/m', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.equal(messages.status, 200);
  const lines = (await messages.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: { text?: string; stop_reason?: string } });
  t.equal(lines.filter((line) => line.type === 'content_block_delta').map((line) => line.delta?.text).join(''), 'zero!');
  t.equal(lines.find((line) => line.type === 'message_delta')?.delta?.stop_reason, 'end_turn');
});
