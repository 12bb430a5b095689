import t from 'tap';
import { bedrockGateway } from '../../helpers/bedrock-gateway.js';
import { textAnswer, textEvents } from '../../helpers/mock-bedrock.js';

// A bedrock route serves every inbound endpoint: /v1/messages and /v1/responses, whole and streamed, through the chat translation.

t.test('/v1/messages and /v1/responses against a bedrock route, whole and streamed', async (t) => {
  const { gateway, mock } = await bedrockGateway(t, (call) => (call.stream ? { events: textEvents(['Hel', 'lo']), pieceSize: 13 } : { json: textAnswer('Hello') }));
  const post = (path: string, body: unknown) => fetch(`${gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const messages = await post('/v1/messages', { model: 'brk/nova', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
  t.match(await messages.json(), { type: 'message', model: 'brk/nova', content: [{ type: 'text', text: 'Hello' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } });
  const messagesStream = await (await post('/v1/messages', { model: 'brk/nova', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true })).text();
  t.match(messagesStream, /event: message_start[\s\S]*"text":"Hel"[\s\S]*"text":"lo"[\s\S]*event: message_stop/);
  const responses = await post('/v1/responses', { model: 'brk/nova', input: 'hi' });
  t.match(await responses.json(), { object: 'response', status: 'completed', model: 'brk/nova', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }] });
  const responsesStream = await (await post('/v1/responses', { model: 'brk/nova', input: 'hi', stream: true })).text();
  t.match(responsesStream, /event: response\.created[\s\S]*"delta":"Hel"[\s\S]*event: response\.completed/);
  t.strictSame(mock.violations, []);
  t.equal(mock.calls.length, 4);
});
