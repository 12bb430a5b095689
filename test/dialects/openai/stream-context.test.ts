import t from 'tap';
import type { StreamReaderContext } from '../../../src/dialects/dialect.js';
import { openaiDialect } from '../../../src/dialects/openai/index.js';
import { startGateway } from '../../helpers/gateway.js';
import { startMockUpstream } from '../../helpers/mock-upstream.js';
import { chunk, readDataEvents, sseBody, startEventStream } from '../../helpers/sse-upstream.js';

t.test("the stream translator learns whether the caller asked for usage (stream_options.include_usage)", async (t) => {
  const contexts: StreamReaderContext[] = [];
  const original = openaiDialect.createStreamReader;
  // The engine reaches the dialect through this object: record what it hands every stream reader.
  (openaiDialect as { createStreamReader: typeof original }).createStreamReader = (context) => {
    contexts.push(context);
    return original(context);
  };
  t.teardown(() => {
    (openaiDialect as { createStreamReader: typeof original }).createStreamReader = original;
  });
  const upstream = await startMockUpstream((_req, res) => {
    startEventStream(res);
    res.end(sseBody([chunk('gpt-4o-2024-11-20', { content: 'hi' })]));
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const ask = { model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };
  for (const streamOptions of [{ include_usage: true }, { include_usage: false }, undefined, { include_usage: 'true' }]) {
    const response = await gateway.post(streamOptions === undefined ? ask : { ...ask, stream_options: streamOptions });
    if (response.status === 200) await readDataEvents(response);
    else await response.arrayBuffer();
  }
  t.same(
    contexts.map((context) => context.includeUsage),
    [true, false, false],
    'true only when the caller asked (a string is refused by the schema before any stream)',
  );
  t.same(contexts.map((context) => context.routingModel), ['mock/gpt-4o', 'mock/gpt-4o', 'mock/gpt-4o']);
});
