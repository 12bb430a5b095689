import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI, { APIError } from 'openai';
import t from 'tap';
import { GATEWAY_ROUTES, startGateway } from '../helpers/gateway.js';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../scripts/routes/problem.js';
import { completionBody, sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';
import { chunk, sseBody, startEventStream } from '../helpers/sse-upstream.js';

/** The engine-test roster with two deprecated models: one with a replacement, one past its sunset (still served). */
const ROUTES = GATEWAY_ROUTES.replace(
  '  mock/gpt-4o: { upstream_model: gpt-4o-2024-11-20 }',
  '  mock/gpt-4o: { upstream_model: gpt-4o-2024-11-20, deprecated: { since: 2026-12-01, sunset: 2027-03-01, replacement: mock/gpt-4.1-mini } }',
).replace('  keyless/llama3.2:\n', '  keyless/llama3.2: { deprecated: { since: 2019-06-01, sunset: 2020-01-01 } }\n');

/** 2026-12-01T00:00:00Z as RFC 9745 writes it; 2027-03-01 as an HTTP-date (RFC 8594). */
const DEPRECATION = '@1796083200';
const SUNSET = 'Mon, 01 Mar 2027 00:00:00 GMT';

const clientFor = (origin: string) => new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'sk-caller', maxRetries: 0 });
const messages = [{ role: 'user' as const, content: 'hi' }];

t.test('answers for a deprecated routing string carry Deprecation, Sunset and x-gateway-replacement (official client, withResponse)', async (t) => {
  t.not(ROUTES, GATEWAY_ROUTES, 'the fixture was changed');
  const upstream = await startMockUpstream((request, res) => {
    const body = JSON.parse(request.body) as { model: string; stream?: boolean };
    if (!body.stream) return sendJson(res, 200, completionBody(body.model));
    startEventStream(res);
    res.end(sseBody([chunk(body.model, { role: 'assistant', content: 'Hi' }), chunk(body.model, {}, { finish_reason: 'stop' })]));
  });
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const client = clientFor(gateway.origin);

  const { data, response } = await client.chat.completions.create({ model: 'mock/gpt-4o', messages }).withResponse();
  t.equal(data.model, 'mock/gpt-4o');
  t.equal(response.headers.get('deprecation'), DEPRECATION);
  t.equal(response.headers.get('sunset'), SUNSET);
  t.equal(response.headers.get('x-gateway-replacement'), 'mock/gpt-4.1-mini');

  const streamed = await client.chat.completions.create({ model: 'mock/gpt-4o', messages, stream: true }).withResponse();
  t.equal(streamed.response.headers.get('deprecation'), DEPRECATION, 'a stream carries them in its head');
  t.equal(streamed.response.headers.get('sunset'), SUNSET);
  t.equal(streamed.response.headers.get('x-gateway-replacement'), 'mock/gpt-4.1-mini');
  let text = '';
  for await (const event of streamed.data) text += event.choices[0]?.delta.content ?? '';
  t.equal(text, 'Hi');

  // Past its sunset the model is still served (only a reviewed removal removes it); no replacement named, no header.
  const late = await client.chat.completions.create({ model: 'keyless/llama3.2', messages }).withResponse();
  t.equal(late.response.status, 200);
  t.equal(late.response.headers.get('deprecation'), '@1559347200');
  t.equal(late.response.headers.get('sunset'), 'Wed, 01 Jan 2020 00:00:00 GMT');
  t.equal(late.response.headers.get('x-gateway-replacement'), null);

  const current = await client.chat.completions.create({ model: 'mock/gpt-4.1-mini', messages }).withResponse();
  for (const name of ['deprecation', 'sunset', 'x-gateway-replacement']) t.equal(current.response.headers.get(name), null, `${name} only on deprecated models`);
});

t.test('error answers for a deprecated model carry the headers too; the log line and /metrics mark the requests', async (t) => {
  const upstream = await startMockUpstream((_request, res) => sendJson(res, 429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } }));
  const gateway = await startGateway({ routes: ROUTES, upstreamOrigin: upstream.origin });
  t.teardown(() => Promise.all([gateway.close(), upstream.close()]));
  const client = clientFor(gateway.origin);

  const error = await client.chat.completions.create({ model: 'mock/gpt-4o', messages }).catch((e: unknown) => e);
  t.type(error, APIError);
  t.equal((error as APIError).status, 429);
  t.equal((error as APIError).headers?.get('deprecation'), DEPRECATION);
  t.equal((error as APIError).headers?.get('sunset'), SUNSET);
  t.equal((error as APIError).headers?.get('x-gateway-replacement'), 'mock/gpt-4.1-mini');

  // A gateway-side refusal after routing (a provider with no key) is an answer for the routing string as well.
  const unconfigured = ROUTES.replace('  unconfigured/model:\n', '  unconfigured/model: { deprecated: { since: 2026-01-01, sunset: 2026-06-01 } }\n');
  const second = await startGateway({ routes: unconfigured, upstreamOrigin: upstream.origin });
  t.teardown(() => second.close());
  const refused = await second.post({ model: 'unconfigured/model', messages });
  t.equal(refused.status, 500);
  t.equal(refused.headers.get('deprecation'), '@1767225600');
  t.equal(refused.headers.get('sunset'), 'Mon, 01 Jun 2026 00:00:00 GMT');

  await client.chat.completions.create({ model: 'mock/gpt-4.1-mini', messages }).catch(() => undefined);
  // The log line is written when the response closes, which may come just after the client has its answer.
  await gateway.logged(() => (gateway.requestLogs().length >= 2 ? true : undefined));
  const lines = gateway.requestLogs();
  t.strictSame(lines.map((line) => [line['model'], line['deprecated']]), [['mock/gpt-4o', true], ['mock/gpt-4.1-mini', false]]);
  const samples = parseExposition(await (await fetch(`${gateway.origin}/metrics`)).text());
  t.equal(valueOf(samples, 'gateway_deprecated_requests_total', { model: 'mock/gpt-4o', caller: 'anonymous' }), 1);
  t.equal(valueOf(samples, 'gateway_deprecated_requests_total', { model: 'mock/gpt-4.1-mini', caller: 'anonymous' }), undefined, 'only deprecated models are counted');
  // The sunset as a gauge, so an alert can weigh who still calls a model by how soon it goes (deploy/prometheus/alerts.yaml).
  t.equal(valueOf(samples, 'gateway_model_sunset_timestamp_seconds', { model: 'mock/gpt-4o' }), Date.parse(SUNSET) / 1000);
  t.equal(valueOf(samples, 'gateway_model_sunset_timestamp_seconds', { model: 'mock/gpt-4.1-mini' }), undefined, 'only deprecated models have a sunset');
});

t.test('npm run check warns about every passed sunset at its line and column, and still exits 0', async (t) => {
  const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
  const file = 'test/fixtures/review/deprecated.yaml';
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/check.ts', file], { cwd: repoRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
  t.equal(result.code, 0, result.stderr);
  t.equal(result.stdout, `${file}: OK (7 models, 4 providers)\n`);
  t.equal(
    result.stderr,
    `${file}:23:59: warning: models."beta/legacy".deprecated.sunset: 2020-01-01 has passed; the model is still served until a reviewed change removes it; callers should be on "beta/big"\n` +
      `${file}:26:57: warning: models."old/model".deprecated.sunset: 2020-01-01 has passed; the model is still served until a reviewed change removes it\n`,
  );
});

t.test('the compiler checks deprecated at line:col: real dates, sunset after since, a replacement callers can move to', async (t) => {
  const result = compileRoutes(readFileSync(new URL('../fixtures/routes/deprecation.yaml', import.meta.url), 'utf8'));
  t.equal(result.ok, false);
  t.strictSame(result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem)), [
    'routes.yaml:8:31: models."p/c".deprecated.since: "2026-02-30" is not a calendar date',
    'routes.yaml:8:76: models."p/c".deprecated.replacement: "p/a" is deprecated too; name a model callers can stay on',
    'routes.yaml:9:53: models."p/d".deprecated.sunset: must be after since (2026-01-01)',
    'routes.yaml:9:78: models."p/d".deprecated.replacement: a model cannot replace itself',
    'routes.yaml:10:10: models."p/e".deprecated: missing required key "sunset"',
    'routes.yaml:10:31: models."p/e".deprecated.since: must be string',
  ]);
  const good = compileRoutes(ROUTES);
  t.strictSame(good.ok && good.tables.models['mock/gpt-4o']?.deprecated, { since: '2026-12-01', sunset: '2027-03-01', replacement: 'mock/gpt-4.1-mini' });
  t.equal(good.ok && good.tables.models['mock/gpt-4.1-mini']?.deprecated, null);
  const offRoster = compileRoutes(ROUTES.replace('replacement: mock/gpt-4.1-mini', 'replacement: mock/gpt-9'));
  t.match(offRoster.ok ? [] : offRoster.problems.map((problem) => problem.message), ['models."mock/gpt-4o".deprecated.replacement: "mock/gpt-9" is not on the roster']);
});
