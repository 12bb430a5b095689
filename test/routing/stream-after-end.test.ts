// After [DONE], the provider's connection is let go within the documented second, whatever it keeps sending.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';
import { chunk, readDataEvents, sseBody, startEventStream } from '../helpers/sse-upstream.js';

const COMMENTS = 60;

t.test('a provider that trickles comments after [DONE] is cut off, not read for as long as it likes', async (t) => {
  let sentAfterEnd = 0;
  let cutOff = false;
  const upstream = await startMockUpstream(async (_req, res) => {
    res.once('close', () => (cutOff = !res.writableFinished));
    startEventStream(res);
    res.write(sseBody([chunk('llama3.2', { role: 'assistant', content: 'Hi' })]));
    // 60 comments 100 ms apart: 6 s of "keep-alive" after the end marker, each read by the gateway.
    for (; sentAfterEnd < COMMENTS && !res.destroyed; sentAfterEnd++) {
      res.write(': still here\n\n');
      await sleep(100);
    }
    res.end();
  });
  const gateway = await startGateway({ upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));

  const response = await gateway.post({ model: 'keyless/llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.equal((await readDataEvents(response)).at(-1), '[DONE]', 'the caller got its whole stream');
  for (let i = 0; i < 2 * COMMENTS && !cutOff && sentAfterEnd < COMMENTS; i++) await sleep(100);
  t.ok(cutOff, 'the gateway closed the provider connection before the provider was done');
  // The after-end time is 1 s: about 10 comments fit in it; far fewer than 60 shows reads did not extend it.
  t.ok(sentAfterEnd < COMMENTS / 2, `the provider got to send ${sentAfterEnd} of ${COMMENTS} comments after [DONE]`);
  for (let i = 0; i < 100 && gateway.tracked().stopHooks > 0; i++) await sleep(10);
  t.same(gateway.tracked(), { inFlight: 0, stopHooks: 0 }, 'the handler settled');
});
