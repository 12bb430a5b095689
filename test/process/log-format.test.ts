import t from 'tap';
import { prettyLine, resolveLogFormat } from '../../src/observe/log-format.js';
import { readServerConfig } from '../../src/server-config.js';
import { logLinesOf, startServerProcess, waitForOutput } from './server-process.js';

t.test('LOG_FORMAT: auto (the default) is pretty on a terminal and JSON otherwise; json and pretty force it', async (t) => {
  t.equal(readServerConfig({}).logFormat, 'auto');
  t.equal(resolveLogFormat('auto', true), 'pretty');
  t.equal(resolveLogFormat('auto', false), 'json');
  t.equal(resolveLogFormat(readServerConfig({ LOG_FORMAT: 'json' }).logFormat, true), 'json');
  t.equal(resolveLogFormat(readServerConfig({ LOG_FORMAT: 'pretty' }).logFormat, false), 'pretty');
  t.throws(() => readServerConfig({ LOG_FORMAT: 'text' }), { name: 'ConfigError', message: 'LOG_FORMAT must be auto, json or pretty' });
});

t.test('a pretty line: clock time, level, message, then the non-null fields', async (t) => {
  const line = JSON.stringify({ level: 30, time: '2026-11-21T12:00:01.250Z', pid: 42, request_id: 'req_1', status: 200, gateway_code: null, stream: true, msg: 'request' });
  t.equal(prettyLine(`${line}\n`), '12:00:01.250 INFO  request request_id=req_1 status=200 stream=true\n');
  const warning = JSON.stringify({ level: 40, time: '2026-11-21T12:00:00.000Z', pid: 42, msg: 'provider "x" is not configured: X_API_KEY is not set' });
  t.equal(prettyLine(warning), '12:00:00.000 WARN  provider "x" is not configured: X_API_KEY is not set\n');
});

t.test('a pretty line cannot drive the terminal: control and non-ASCII characters in values are escaped', async (t) => {
  const line = JSON.stringify({ level: 50, time: '2026-11-21T12:00:00.000Z', path: '/v1/\u001b[2J x', model: 'caf\u00e9\u202e', list: ['\u0007'], msg: 'bad\u001b]0;title\u0007' });
  const text = prettyLine(line);
  t.equal(text, '12:00:00.000 ERROR "bad\\u001b]0;title\\u0007" path="/v1/\\u001b[2J x" model="caf\\u00e9\\u202e" list=["\\u0007"]\n');
  t.notMatch(text.slice(0, -1), /[^\x20-\x7e]/, 'nothing but printable ASCII before the newline');
});

t.test('the server process writes pretty lines with LOG_FORMAT=pretty, and JSON lines by default when piped', async (t) => {
  const pretty = await startServerProcess({ LOG_FORMAT: 'pretty' });
  t.teardown(() => pretty.child.kill('SIGKILL'));
  await fetch(`${pretty.origin}/v1/models`);
  const output = await waitForOutput(pretty, (text) => (/ INFO {2}request .*status=404/.test(text) ? text : undefined));
  t.match(output, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}not configured, no key set: anthropic \(ANTHROPIC_API_KEY\), deepseek \(DEEPSEEK_API_KEY\), .*, xai \(XAI_API_KEY\); their models answer 500 provider_not_configured/m);
  t.match(output, /^chat-routing-gateway \S+ listening on http:\/\/127\.0\.0\.1:\d+ \(routes sha256 [0-9a-f]{12}\)$/m);
  t.match(output, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request request_id=req_[0-9a-f]{32} caller=anonymous method=GET path=\/v1\/models stream=false status=404 gateway_code=not_found completed=true duration_ms=/m);
  t.notMatch(output, /^\{/m, 'no JSON line');

  const json = await startServerProcess({});
  t.teardown(() => json.child.kill('SIGKILL'));
  // JSON lines are batched: the first batch reaches stdout within about a second of start-up.
  const lines = await waitForOutput(json, (text) => (logLinesOf(text).some((line) => line['level'] === 40) ? logLinesOf(text) : undefined), 15_000);
  const warnings = lines.filter((line) => line['level'] === 40);
  t.equal(warnings.length, 1, 'one warning line for all the providers without a key, not one each');
  const unkeyed = ['anthropic', 'deepseek', 'fireworks', 'google', 'groq', 'mistral', 'openai', 'openrouter', 'together', 'xai'];
  t.equal(
    warnings[0]!['msg'],
    `not configured, no key set: ${unkeyed.map((id) => `${id} (${id === 'google' ? 'GEMINI' : id.toUpperCase()}_API_KEY)`).join(', ')}; their models answer 500 provider_not_configured (an endpoint among several is avoided instead)`,
  );
});
