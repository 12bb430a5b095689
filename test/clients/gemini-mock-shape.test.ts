import { ApiError, FinishReason, GoogleGenAI } from '@google/genai';
import t from 'tap';
import { PROVIDER_KEY } from '../helpers/gateway.js';
import { answerPerCandidate, candidatesResponse, response, startMockGemini, USAGE, type GeminiAnswer, type GeminiCall } from '../helpers/mock-gemini.js';

// The Gemini mock the dialect tests use, read by Google's own SDK (@google/genai): its answers, streamed records
// cut into 5-byte reads and error bodies have the shapes the real API has, so the dialect is tested against
// Gemini's protocol and not against a guess of it. The SDK also sends what the mock checks (path, x-goog-api-key).

async function sdkOn(t: Tap, answer: (n: number, call: GeminiCall) => GeminiAnswer) {
  const mock = await startMockGemini((call, n) => answer(n, call));
  t.teardown(() => mock.close());
  const ai = new GoogleGenAI({ apiKey: PROVIDER_KEY, httpOptions: { baseUrl: mock.origin, retryOptions: { attempts: 1 } } as never });
  return { ai, mock };
}
type Tap = { teardown(fn: () => unknown): void };

const TOOL_PARTS = [
  { text: 'Plan.', thought: true },
  { functionCall: { name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' },
  { functionCall: { id: 'fc-2', name: 'time', args: {} } },
];
const THOUGHT_USAGE = { promptTokenCount: 1000, cachedContentTokenCount: 600, toolUsePromptTokenCount: 20, candidatesTokenCount: 50, thoughtsTokenCount: 300, totalTokenCount: 1370 };

t.test('a tool turn with thoughts, a signature and usage: the SDK reads calls, thoughts, signature, finish and usage', async (t) => {
  const { ai, mock } = await sdkOn(t, () => ({ json: response(TOOL_PARTS, 'STOP', THOUGHT_USAGE) }));
  const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'weather?' });
  t.same(answer.functionCalls?.map((call) => [call.name, call.args]), [['weather', { city: 'Paris' }], ['time', {}]]);
  t.equal(answer.candidates?.[0]?.content?.parts?.[1]?.thoughtSignature, 'c2lnLTE=');
  t.equal(answer.candidates?.[0]?.content?.parts?.[0]?.thought, true);
  t.equal(answer.candidates?.[0]?.finishReason, FinishReason.STOP);
  t.match(answer.usageMetadata, THOUGHT_USAGE);
  t.equal(answer.responseId, 'resp-gem-1');
  t.same(mock.violations, [], 'the SDK request passes the mock checks');
});

t.test('a blocked prompt: no candidates, promptFeedback.blockReason', async (t) => {
  const { ai } = await sdkOn(t, () => ({ json: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } } }));
  const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'bad' });
  t.equal(answer.candidates, undefined);
  t.equal(answer.promptFeedback?.blockReason, 'SAFETY');
});

t.test('streamed records cut into 5-byte reads: every record a whole response, text and calls in order', async (t) => {
  const records = [
    response([{ text: 'Grüße ' }]),
    response([{ text: 'aus Köln 🌧' }, { functionCall: { name: 'f', args: { a: 1 } } }]),
    response([], 'STOP', USAGE),
  ];
  const { ai, mock } = await sdkOn(t, () => ({ records, pieceSize: 5 }));
  const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' });
  let text = '';
  const calls: string[] = [];
  let finish: unknown;
  for await (const record of stream) {
    for (const part of record.candidates?.[0]?.content?.parts ?? []) text += part.text ?? '';
    for (const call of record.functionCalls ?? []) calls.push(call.name!);
    finish = record.candidates?.[0]?.finishReason ?? finish;
  }
  t.equal(text, 'Grüße aus Köln 🌧');
  t.same(calls, ['f']);
  t.equal(finish, FinishReason.STOP);
  t.equal(mock.calls[0]!.stream, true);
  t.same(mock.violations, []);
});

t.test('an error body: the SDK raises it with its code and status word', async (t) => {
  const { ai } = await sdkOn(t, () => ({ status: 429, json: { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } } }));
  const error = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).then(() => undefined, (caught: unknown) => caught);
  t.type(error, ApiError);
  t.equal((error as ApiError).status, 429);
  t.match((error as ApiError).message, /RESOURCE_EXHAUSTED/);
});

t.test('candidateCount: the SDK sends it in generationConfig; the answer holds one candidate per index, whole and streamed', async (t) => {
  // Streamed, candidates come in records of their own or together, each with its index; each finishes on its own.
  const records = [
    candidatesResponse([{ index: 0, parts: [{ text: 'Un' }] }]),
    candidatesResponse([{ index: 1, parts: [{ text: 'Uno' }] }, { index: 0, parts: [{ text: ' deux' }], finishReason: 'STOP' }]),
    candidatesResponse([{ index: 1, parts: [{ text: ' dos' }], finishReason: 'MAX_TOKENS' }], USAGE),
  ];
  const { ai, mock } = await sdkOn(t, (n, call) => (n === 0 ? { json: answerPerCandidate(call, 'take') } : { records, pieceSize: 7 }));
  const answer = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi', config: { candidateCount: 3 } });
  t.equal(mock.calls[0]!.candidateCount, 3, 'the SDK sends generationConfig.candidateCount');
  t.same(answer.candidates?.map((candidate) => [candidate.index, candidate.content?.parts?.[0]?.text, candidate.finishReason]), [
    [0, 'take 0', FinishReason.STOP],
    [1, 'take 1', FinishReason.STOP],
    [2, 'take 2', FinishReason.STOP],
  ]);

  const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi', config: { candidateCount: 2 } });
  const texts = ['', ''];
  const finishes: unknown[] = [];
  for await (const record of stream) {
    for (const candidate of record.candidates ?? []) {
      texts[candidate.index!] += candidate.content?.parts?.map((part) => part.text ?? '').join('') ?? '';
      if (candidate.finishReason) finishes[candidate.index!] = candidate.finishReason;
    }
  }
  t.same(texts, ['Un deux', 'Uno dos']);
  t.same(finishes, [FinishReason.STOP, FinishReason.MAX_TOKENS]);
  t.equal(mock.calls[1]!.candidateCount, 2);
  t.same(mock.violations, []);
});
