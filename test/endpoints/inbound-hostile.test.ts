import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { eventsOf, startInboundRig } from '../helpers/inbound-rig.js';
import { startEventStream } from '../helpers/sse-upstream.js';

// Hostile providers and callers on the new endpoints: every request settles, memory stays bounded.

/** A provider that streams text deltas until the gateway hangs up. */
function endless(res: ServerResponse): void {
  startEventStream(res);
  const delta = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'x'.repeat(1000) }, finish_reason: null }] })}\n\n`;
  const timer = setInterval(() => res.write(delta.repeat(20)), 5);
  res.on('close', () => clearInterval(timer));
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await sleep(25);
};

t.test('an endless stream to /v1/responses: the held answer stops at max_upstream_body_bytes with response.failed, and the stream ends', async (t) => {
  const rig = await startInboundRig(t, { maxUpstreamBodyBytes: 256 * 1024, oaiHandler: endless });
  const response = await fetch(`${rig.gateway.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'oai/gpt', input: 'hi', stream: true }) });
  const events = eventsOf(await response.text());
  const last = events.at(-1)!;
  t.equal(last.data['type'], 'response.failed');
  t.match(last.data['response'], { status: 'failed', error: { gateway_code: 'invalid_upstream_response', message: /answer whose held text would cost more than 262144 bytes/ } });
  await until(() => rig.gateway.tracked().inFlight === 0 && rig.oai.closedConnections > 0);
  t.strictSame(rig.gateway.tracked(), { inFlight: 0, stopHooks: 0 });
  t.ok(rig.oai.closedConnections > 0, 'the provider connection was let go');
});

t.test('a caller leaving a translated /v1/messages stream stops the provider call', async (t) => {
  const rig = await startInboundRig(t, { oaiHandler: endless });
  const controller = new AbortController();
  const response = await fetch(`${rig.gateway.origin}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'oai/gpt', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  t.match(first, /^event: message_start/);
  controller.abort();
  await until(() => rig.oai.closedConnections > 0 && rig.gateway.tracked().inFlight === 0);
  t.ok(rig.oai.closedConnections > 0);
  t.strictSame(rig.gateway.tracked(), { inFlight: 0, stopHooks: 0 });
});

t.test('hostile bodies on the new endpoints get clear 400s, never a crash', async (t) => {
  const rig = await startInboundRig(t);
  const cases: [string, string, unknown, RegExp][] = [
    ['/v1/responses', 'not an object', [1, 2], /JSON object/],
    ['/v1/responses', 'input of the wrong type', { model: 'oai/gpt', input: 42 }, /input/],
    ['/v1/responses', 'an item of the wrong type', { model: 'oai/gpt', input: [null] }, /input\[0\]/],
    ['/v1/responses', 'a foreign encrypted_content that is not a string', { model: 'oai/gpt', input: [{ type: 'reasoning', encrypted_content: 5 }, { role: 'user', content: 'x' }] }, /encrypted_content/],
    ['/v1/responses', 'a forged gateway encrypted_content', { model: 'oai/gpt', input: [{ type: 'reasoning', encrypted_content: 'gw1.bm90LWpzb24' }, { role: 'user', content: 'x' }] }, /encrypted_content/],
    ['/v1/messages', 'messages not an array', { model: 'oai/gpt', max_tokens: 1, messages: 'hi' }, /messages/],
    ['/v1/messages', 'a missing max_tokens on a translated route', { model: 'oai/gpt', messages: [{ role: 'user', content: 'hi' }] }, /max_tokens/],
    ['/v1/messages', 'a wrong role', { model: 'oai/gpt', max_tokens: 1, messages: [{ role: 'system', content: 'hi' }] }, /role/],
    ['/v1/messages', 'a model that is not a string', { model: 7, max_tokens: 1, messages: [] }, /model/],
  ];
  for (const [path, label, body, message] of cases) {
    const response = await fetch(`${rig.gateway.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    t.equal(response.status, 400, label);
    const text = await response.text();
    t.match(text, message, label);
  }
  t.equal(rig.oai.requests.length + rig.claude.requests.length, 0);
});
