// The request log line is written from a template (src/observe/info-line.ts), not through pino's field loop: it must
// come out byte for byte as pino writes the same fields, for the loggers the gateway and its tests make.
import t from 'tap';
import pino, { type LoggerOptions } from 'pino';
import { infoLineWriter, json, num } from '../../src/observe/info-line.js';

const fields = {
  request_id: 'req_0123',
  caller: null,
  path: 'a "quoted" \\ path…',
  stream: true,
  status: 200,
  duration_ms: 12.3,
  first_event_ms: null,
  attempts: [{ route: 'mock/a', provider: 'mock', endpoint: 'default', outcome: 'ok', ms: 1.5 }],
  cost_usd: 0.0000196,
};
const fragment =
  `"request_id":${json(fields.request_id)},"caller":${json(fields.caller)},"path":${json(fields.path)},"stream":${fields.stream}` +
  `,"status":${num(fields.status)},"duration_ms":${num(fields.duration_ms)},"first_event_ms":${num(fields.first_event_ms)}` +
  `,"attempts":${json(fields.attempts)},"cost_usd":${num(fields.cost_usd)}`;

function linesOf(options: LoggerOptions, write: (logger: pino.Logger) => void): string[] {
  const lines: string[] = [];
  write(pino({ timestamp: () => ',"time":"2026-11-26T00:00:00.000Z"', ...options }, { write: (line: string) => void lines.push(line) }));
  return lines;
}

const loggers: [string, LoggerOptions][] = [
  ['as server.ts makes it', { base: { pid: 4242 } }],
  ['with no bindings', { base: null }],
  ['with a mixin (through pino)', { mixin: () => ({ worker: 3 }) }],
  ['with redaction (through pino)', { redact: ['caller'] }],
];
for (const [name, options] of loggers) {
  t.test(`a request line ${name} is what pino writes`, async (t) => {
    const ours = linesOf(options, (logger) => infoLineWriter(logger, 'request')(fragment));
    const theirs = linesOf(options, (logger) => logger.info(fields, 'request'));
    t.equal(ours.length, 1);
    t.equal(ours[0], theirs[0]);
    t.same(JSON.parse(ours[0]!).attempts, fields.attempts);
  });
}

t.test('a logger above info writes no request line', async (t) => {
  t.same(linesOf({ level: 'warn' }, (logger) => infoLineWriter(logger, 'request')(fragment)), []);
  const later = linesOf({}, (logger) => {
    const write = infoLineWriter(logger, 'request');
    logger.level = 'error';
    write(fragment);
    logger.level = 'info';
    write(fragment);
  });
  t.equal(later.length, 1, 'the level is read per line');
});

t.test('a number that is not finite is written as null, as pino writes it', async (t) => {
  t.equal(num(Number.NaN), 'null');
  t.equal(num(Number.POSITIVE_INFINITY), 'null');
  t.equal(num(-0), '0');
});
