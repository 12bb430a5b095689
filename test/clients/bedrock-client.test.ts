import t from 'tap';
import { bedrockGateway } from '../helpers/bedrock-gateway.js';
import { textAnswer, textEvents } from '../helpers/mock-bedrock.js';

// The official openai client against a bedrock route (a Claude inference profile with a Bedrock API key on the mock).

t.test('text: Converse at the encoded profile id, the answer as a chat.completion with its usage', async (t) => {
  const { mock, client } = await bedrockGateway(t, () => ({ json: textAnswer('Hello from Bedrock', { inputTokens: 12, outputTokens: 4, totalTokens: 26, cacheReadInputTokens: 6, cacheWriteInputTokens: 4 }) }));
  const answer = await client.chat.completions.create({
    model: 'brk/sonnet',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    max_tokens: 100,
    temperature: 0.5,
  });
  t.equal(answer.choices[0]!.message.content, 'Hello from Bedrock');
  t.equal(answer.choices[0]!.finish_reason, 'stop');
  t.equal(answer.model, 'brk/sonnet');
  t.match(answer.id, /^chatcmpl-/);
  t.same(answer.usage, { prompt_tokens: 22, completion_tokens: 4, total_tokens: 26, prompt_tokens_details: { cached_tokens: 6, cache_write_tokens: 4 } });
  t.strictSame(mock.violations, []);
  const call = mock.calls[0]!;
  t.equal(call.rawPath, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
  t.equal(call.stream, false);
  t.equal(call.bodyBytes.toString(), '{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"system":[{"text":"Be brief."}],"inferenceConfig":{"maxTokens":100,"temperature":0.5}}');
});

t.test('streams with usage: text deltas, the finish chunk, the usage chunk, [DONE]; frames cut at every few bytes', async (t) => {
  const { mock, client } = await bedrockGateway(t, () => ({ events: textEvents(['Hel', 'lo ', 'there'], { inputTokens: 9, outputTokens: 3, totalTokens: 12 }), pieceSize: 7 }));
  const stream = await client.chat.completions.create({ model: 'brk/sonnet', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } });
  let text = '';
  const finishes: unknown[] = [];
  let usage: unknown;
  const ids = new Set<string>();
  for await (const chunk of stream) {
    ids.add(chunk.id);
    t.equal(chunk.model, 'brk/sonnet');
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    if (chunk.usage) usage = chunk.usage;
  }
  t.equal(text, 'Hello there');
  t.same(finishes, ['stop']);
  t.same(usage, { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
  t.equal(ids.size, 1, 'one id on every chunk');
  t.equal(mock.calls[0]!.rawPath, '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
  t.strictSame(mock.violations, []);
});
