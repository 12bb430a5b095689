// readLimited always settles: a body cut off without an error (a bare destroy()) rejects rather than waiting forever.
import { get } from 'node:http';
import t from 'tap';
import { readLimited } from '../../src/routing/read-limited.js';
import { startMockUpstream } from '../helpers/mock-upstream.js';

t.test('a response destroyed without an error while being read rejects', async (t) => {
  const upstream = await startMockUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
    res.write('{"half":');
  });
  t.teardown(() => upstream.close());
  const response = await new Promise<import('node:http').IncomingMessage>((resolve) => get(`${upstream.origin}/`, { agent: false }, resolve));
  const reading = readLimited(response, 4096);
  response.once('data', () => response.destroy());
  await t.rejects(reading, { code: 'ERR_STREAM_PREMATURE_CLOSE' });
});

t.test('a whole body and an overflow still resolve', async (t) => {
  const upstream = await startMockUpstream((_req, res) => void res.end('0123456789'));
  t.teardown(() => upstream.close());
  const fetchBody = () => new Promise<import('node:http').IncomingMessage>((resolve) => get(`${upstream.origin}/`, { agent: false }, resolve));
  const whole = await readLimited(await fetchBody(), 100);
  t.same({ text: whole.bytes.toString(), truncated: whole.truncated }, { text: '0123456789', truncated: false });
  const cut = await readLimited(await fetchBody(), 4);
  t.same({ text: cut.bytes.toString(), truncated: cut.truncated }, { text: '0123', truncated: true });
});
