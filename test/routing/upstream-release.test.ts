// A provider call that is over lets its objects go (src/routing/let-go-when-done.ts): V8's young-generation
// collections kept a finished got request, and everything it references, alive until the next full collection.
// Cutting it loose must not cost the connection: the provider's keep-alive socket goes back to the pool and
// serves the next request.
import { Agent, request } from 'node:http';
import { Session, type HeapProfiler } from 'node:inspector/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { completionBody, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.js';
import { chunk, readDataEvents, sseBody } from '../helpers/sse-upstream.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const ANSWER = JSON.stringify(completionBody('gpt-4o-2024-11-20', 'Hello there, from one connection.'));
const STREAM = sseBody([chunk('gpt-4o-2024-11-20', { role: 'assistant', content: 'Hel' }), chunk('gpt-4o-2024-11-20', { content: 'lo' })]);

/** A provider answering every request alike, an answer or a stream as asked. */
async function provider(t: Test): Promise<MockUpstream> {
  const upstream = await startMockUpstream((request, res) => {
    const streamed = (JSON.parse(request.body) as { stream?: boolean }).stream === true;
    const body = streamed ? STREAM : ANSWER;
    res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  t.teardown(() => upstream.close());
  return upstream;
}

const ask = (stream: boolean) => ({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });

t.test('one provider connection serves sequential answers and streams, each whole', async (t) => {
  const upstream = await provider(t);
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => gateway.close());
  for (let i = 0; i < 6; i++) {
    const stream = i % 2 === 1;
    const response = await gateway.post(ask(stream));
    t.equal(response.status, 200, `request ${i + 1} answered`);
    if (stream) t.same((await readDataEvents(response)).at(-1), '[DONE]', `stream ${i + 1} whole`);
    else t.equal(((await response.json()) as { model: string }).model, 'mock/gpt-4o', `answer ${i + 1} whole`);
    // Past the gateway's deferred clean-up (a request destroyed after its end, its fields cut once closed).
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.equal(upstream.openedConnections, 1, 'every request went over the first connection');
});

t.test("a finished provider call's objects do not outlive young-generation collections", async (t) => {
  const upstream = await provider(t);
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => gateway.close());
  // node:http as the caller: fetch keeps objects of its own across young collections.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const post = (stream: boolean) =>
    new Promise<number>((resolve, reject) => {
      const call = request(`${gateway.origin}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      });
      call.on('error', reject);
      call.end(JSON.stringify(ask(stream)));
    });
  const session = new Session();
  session.connect();
  t.teardown(() => session.disconnect());
  for (const stream of [false, true]) {
    // Warmed up first: the sample also counts what stays alive, such as the code compiled on the first calls.
    for (let i = 0; i < 100; i++) await post(stream);
    // Every object sampled that a young-generation collection kept and only a full one freed, with where it was allocated.
    await session.post('HeapProfiler.startSampling', { samplingInterval: 64, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
    const requests = 40;
    for (let i = 0; i < requests; i++) {
      t.equal(await post(stream), 200);
      // Past the gateway's deferred clean-up, then two young collections: what is still reachable moves to the old generation.
      await new Promise((resolve) => setTimeout(resolve, 20));
      gc({ type: 'minor' });
      gc({ type: 'minor' });
    }
    gc({ type: 'major' });
    const { profile } = await session.post('HeapProfiler.stopSampling');
    const perRequest = bytesAllocatedUnder(profile.head, '/node_modules/got/') / requests;
    // Before the change: ~12 KB per request (got's options, request, ClientRequest, response), on Node 22 and 24 alike; after it, ~2 KB.
    t.ok(perRequest < 5_000, `${stream ? 'streams' : 'answers'}: ${(perRequest / 1024).toFixed(1)} KiB of got's objects per request outlived young collections`);
  }
});

/**
 * Bytes sampled in allocations made, directly or not, by code whose URL contains `path`; not counting the async
 * hooks' (tap's own records of every async resource, which live as long as the test does).
 */
function bytesAllocatedUnder(node: HeapProfiler.SamplingHeapProfileNode, path: string, under = false): number {
  if (node.callFrame.url === 'node:internal/async_hooks') return 0;
  const here = under || node.callFrame.url.includes(path);
  return (here ? node.selfSize : 0) + node.children.reduce((sum, child) => sum + bytesAllocatedUnder(child, path, here), 0);
}
