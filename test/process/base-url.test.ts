import t from 'tap';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../scripts/routes/problem.js';
import { readSchema } from '../../scripts/schemas.js';
import { BASE_URL_PATTERN } from '../../src/routing/base-url-rules.js';
import { prepareProviders } from '../../src/routing/runtime-providers.js';
import { runServerExpectingExit } from './server-process.js';

/** The one problem the compiler reports for `baseUrl` (written as a JSON string, so any text fits), or null. */
function compilerVerdict(baseUrl: string): string | null {
  const result = compileRoutes(routesWith(baseUrl, 'MOCK_BASE_URL'));
  if (result.ok) return null;
  return result.problems.map((problem) => formatProblem('routes.yaml', problem)).join('\n');
}

/** What start-up says of the same text given as the base_url_env override, or null when it starts. */
function startUpVerdict(baseUrl: string): string | null {
  const result = compileRoutes(routesWith('http://127.0.0.1:9/v1', 'MOCK_BASE_URL'));
  if (!result.ok) throw new Error('the base routes must compile');
  try {
    prepareProviders(result.tables, { MOCK_BASE_URL: baseUrl }, 'test').close();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

function routesWith(baseUrl: string, env: string): string {
  return [
    'version: 1',
    'providers:',
    '  mock:',
    `    base_url: ${JSON.stringify(baseUrl)}`,
    `    base_url_env: ${env}`,
    'models:',
    '  mock/model:',
    'errors:',
    '  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }',
    '',
  ].join('\n');
}

const plain = 'must not carry credentials, a query or a fragment (use api_key_env and headers)';
const cases: [string, string | null][] = [
  ['http://127.0.0.1:11434/v1', null],
  ['https://api.example.com/v1/', null],
  ['http://[::1]:8080/v1', null],
  ['http://[::1]/v1', null],
  ['https://api.example.com:65535/v1', null],
  ['http://user:pw@host/v1?x=1#f', plain],
  ['https://user@api.example.com/v1', plain],
  ['https://:secret@api.example.com/v1', plain],
  ['https://api.example.com/v1?key=abc', plain],
  ['https://api.example.com/v1#chat', plain],
  ['https://api.example.com/v1?', plain],
  ['https://api.example.com/v1#', plain],
  ['http://127.0.0.1:99999/v1', 'port 99999 is out of range (1 to 65535)'],
  ['http://[::1]:65536/v1', 'port 65536 is out of range (1 to 65535)'],
  ['http://user:pw@127.0.0.1:70000', 'port 70000 is out of range (1 to 65535)'],
  ['http://127.0.0.1:0/v1', 'port 0 is out of range (1 to 65535)'],
  ['http://127.0.0.1:80a/v1', 'must be an absolute http:// or https:// URL'],
  ['http://[::1/v1', 'must be an absolute http:// or https:// URL'],
  ['ftp://files.example.com/v1', 'is not an http:// or https:// URL'],
  ['api.example.com/v1', 'is not an http:// or https:// URL'],
  ['HTTP://api.example.com/v1', 'is not an http:// or https:// URL'],
  ['http://api.example.com/v1 ', 'is not an http:// or https:// URL'],
];

t.test('a base_url_env override is refused at start-up exactly when routes.yaml would refuse it as base_url', async (t) => {
  for (const [url, problem] of cases) {
    const compiled = compilerVerdict(url);
    const started = startUpVerdict(url);
    if (problem === null) {
      t.equal(compiled, null, `${url}: the compiler accepts it`);
      t.equal(started, null, `${url}: start-up accepts it`);
      continue;
    }
    // The schema names the value for a URL that is not http(s) at all; the other checks do not repeat it.
    t.match(compiled, `routes.yaml:4:15: providers.mock.base_url: `, url);
    t.ok(compiled?.endsWith(problem), `${url}: the compiler says ${problem}`);
    t.equal(started, `MOCK_BASE_URL (the base_url of provider "mock"): ${problem}`, url);
  }
});

t.test('the start-up check uses the schema\'s own base_url pattern', async (t) => {
  const schema = readSchema('routes.schema.json') as { definitions: { Provider: { properties: { base_url: { pattern: string } } } } };
  t.equal(new RegExp(schema.definitions.Provider.properties.base_url.pattern).source, BASE_URL_PATTERN.source);
});

t.test('the server refuses to start on an override with credentials, in one line that does not echo them', async (t) => {
  const { code, output } = await runServerExpectingExit({ GATEWAY_OPENAI_BASE_URL: 'http://user:hunter2@api.example.com/v1?x=1#f' });
  t.equal(code, 1);
  t.equal(output.trim().split('\n').length, 1, output);
  t.match(output, /GATEWAY_OPENAI_BASE_URL \(the base_url of provider "openai"\): must not carry credentials/);
  t.notMatch(output, /hunter2/);
});
