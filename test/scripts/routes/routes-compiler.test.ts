import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { compileRoutes } from '../../../scripts/routes/compile-routes.js';
import { formatProblem } from '../../../scripts/routes/problem.js';
import { DEFAULT_STREAM_IDLE_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from '../../../scripts/routes/resolve-routes.js';
import type { RouteTables } from '../../../src/generated/types/route-tables.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/routes/${name}`, import.meta.url), 'utf8');

/** Compiles text that must be valid; fails the test (with the problems) otherwise. */
function tablesOf(t: Test, text: string): RouteTables {
  const result = compileRoutes(text);
  if (!result.ok) {
    t.fail('expected the routes to compile', { problems: result.problems.map((p) => formatProblem('routes.yaml', p)) });
    throw new Error('routes did not compile');
  }
  return result.tables;
}

/** Every problem of a fixture that must be rejected, as the CLI prints it (with the file called routes.yaml). */
function problemsOf(name: string): string[] {
  const result = compileRoutes(fixture(name));
  return result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
}

t.test('the shipped routes.yaml compiles', async (t) => {
  const text = readFileSync(new URL('../../../routes.yaml', import.meta.url), 'utf8');
  const tables = tablesOf(t, text);
  t.equal(tables.sourceSha256, createHash('sha256').update(text).digest('hex'));
  t.strictSame(tables.models['openai/gpt-4o'], { provider: 'openai', upstreamModel: 'gpt-4o-2024-11-20', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null });
  t.strictSame(tables.models['openrouter/anthropic/claude-sonnet-4.5'], {
    provider: 'openrouter',
    upstreamModel: 'anthropic/claude-sonnet-4.5',
    maxOutputTokens: null,
    reasoning: 'none',
    fallback: [],
    deprecated: null,
    allowFields: [],
    price: null,
  });
  t.strictSame(tables.callers, {}, 'no callers section: an empty table');
  t.ok(tables.errors['default'], 'the global default error rule is there');
  for (const [routingString, model] of Object.entries(tables.models)) {
    t.ok(model && tables.providers[model.provider], `${routingString} goes to a declared provider`);
  }
});

t.test('a valid file resolves into engine tables', async (t) => {
  const text = fixture('good.yaml');
  const tables = tablesOf(t, text);

  t.test('routing strings', async (t) => {
    t.strictSame(tables.models, {
      'openai/gpt-4o': { provider: 'openai', upstreamModel: 'gpt-4o-2024-11-20', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
      'openai/gpt-4o-mini': { provider: 'openai', upstreamModel: 'gpt-4o-mini', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
      'openrouter/anthropic/claude-sonnet-4.5': { provider: 'openrouter', upstreamModel: 'anthropic/claude-sonnet-4.5', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
    });
  });

  t.test('providers', async (t) => {
    t.strictSame(Object.keys(tables.providers), ['openai', 'openrouter']);
    t.match(tables.providers['openai'], {
      id: 'openai',
      dialect: 'openai',
      endpoints: [{ name: '0', baseUrl: 'https://api.openai.com/v1', baseUrlEnv: 'OPENAI_BASE_URL', apiKeyEnv: 'OPENAI_API_KEY', weight: 1 }],
      auth: { header: 'authorization', scheme: 'bearer' },
      headers: {},
      timeoutMs: 120000,
      errors: {},
    });
    t.match(tables.providers['openrouter'], {
      endpoints: [{ name: '0', baseUrl: 'https://openrouter.ai/api/v1', baseUrlEnv: null, apiKeyEnv: 'OPENROUTER_API_KEY', weight: 1 }],
      headers: { 'X-Title': 'test-gateway' },
    });
  });

  t.test('timeout_ms: a provider inherits defaults, its own value wins', async (t) => {
    t.equal(tables.providers['openai']?.timeoutMs, 120000);
    t.equal(tables.providers['openrouter']?.timeoutMs, 30000);
    const withoutDefaults = text.replace(/^defaults:\n {2}timeout_ms: 120000\n {2}stream_idle_timeout_ms: 90000\n/m, '');
    t.not(withoutDefaults, text, 'the defaults block was removed');
    const fallback = tablesOf(t, withoutDefaults);
    t.equal(fallback.providers['openai']?.timeoutMs, DEFAULT_TIMEOUT_MS);
    t.equal(fallback.providers['openrouter']?.timeoutMs, 30000);
  });

  t.test('stream_idle_timeout_ms: a provider inherits defaults, its own value wins', async (t) => {
    t.equal(tables.providers['openai']?.streamIdleTimeoutMs, 90000);
    t.equal(tables.providers['openrouter']?.streamIdleTimeoutMs, 45000);
    const withoutDefault = tablesOf(t, text.replace(/^ {2}stream_idle_timeout_ms: 90000\n/m, ''));
    t.equal(withoutDefault.providers['openai']?.streamIdleTimeoutMs, DEFAULT_STREAM_IDLE_TIMEOUT_MS);
    t.equal(withoutDefault.providers['openrouter']?.streamIdleTimeoutMs, 45000);
  });

  t.test('error rules: retry follows the answered status unless given', async (t) => {
    const retryOf = (key: string) => tables.errors[key]?.retry;
    t.equal(retryOf('400'), true, 'answers 409');
    t.equal(retryOf('401'), false, 'answers 502 but says retry: false');
    t.equal(retryOf('402'), false, 'answers 402');
    t.equal(retryOf('408'), true, 'answers 408');
    t.equal(retryOf('429'), true, 'answers 429');
    t.equal(retryOf('4xx'), false, 'answers 400');
    t.equal(retryOf('503'), false, 'answers 499, whatever the provider said');
    t.equal(retryOf('5xx'), true, 'answers 500');
    t.equal(retryOf('default'), true, 'answers 599');
    t.strictSame(tables.errors['401'], {
      status: 502,
      type: 'server_error',
      code: 'upstream_auth_failed',
      gatewayCode: 'provider_auth_failed',
      retry: false,
    });
    const providerErrors = tables.providers['openrouter']?.errors;
    t.strictSame(Object.keys(providerErrors ?? {}).sort(), ['429', '4xx']);
    t.equal(providerErrors?.['429']?.retry, true, 'answers 503');
    t.equal(providerErrors?.['429']?.gatewayCode, 'provider_overloaded');
    t.equal(providerErrors?.['4xx']?.retry, true, 'answers 400 but says retry: true');
  });

  t.test('sourceSha256 is the hex sha256 of the text', async (t) => {
    t.equal(tables.sourceSha256, createHash('sha256').update(text, 'utf8').digest('hex'));
    t.match(tables.sourceSha256, /^[0-9a-f]{64}$/);
    t.not(tablesOf(t, `${text}# edited\n`).sourceSha256, tables.sourceSha256, 'a comment-only edit changes it');
  });
});

t.test('models keys in code-point order compile even where locale or UTF-16 order disagrees', async (t) => {
  t.ok('openai/Beta'.localeCompare('openai/alpha') > 0, 'locale order would put alpha first');
  t.strictSame(['openai/ｚ', 'openai/😀'].sort(), ['openai/😀', 'openai/ｚ'], 'UTF-16 order would put the emoji first');
  const tables = tablesOf(t, fixture('code-point-order.yaml'));
  t.strictSame(Object.keys(tables.models), ['openai/Beta', 'openai/alpha', 'openai/ｚ', 'openai/😀']);
  t.equal(tables.models['openai/😀']?.upstreamModel, '😀');
});

t.test('a model whose prefix is not a declared provider', async (t) => {
  t.strictSame(problemsOf('unknown-provider.yaml'), ['routes.yaml:7:3: models."opnai/gpt-4o": unknown provider "opnai"']);
});

t.test('a routing string needs a provider, a slash and no empty segment', async (t) => {
  t.strictSame(problemsOf('routing-string.yaml'), [
    'routes.yaml:6:3: models."/x": a routing string is <provider>/<model> with no empty segment',
    'routes.yaml:7:3: models.openai: a routing string is <provider>/<model> with no empty segment',
    'routes.yaml:8:3: models."openai/": a routing string is <provider>/<model> with no empty segment',
    'routes.yaml:9:3: models."openai//x": a routing string is <provider>/<model> with no empty segment',
    'routes.yaml:10:3: models."openai/gpt 4o": a routing string has no white space or control characters',
  ]);
});

t.test('duplicate keys are reported at the second key, in block and flow maps', async (t) => {
  t.strictSame(problemsOf('duplicate-keys.yaml'), [
    'routes.yaml:5:3: duplicate key "openai": it is first given on line 3; keep one of the two (a key may appear once in a map)',
    'routes.yaml:11:3: duplicate key "openai/gpt-4o": it is first given on line 8; keep one of the two (a key may appear once in a map)',
    'routes.yaml:13:3: duplicate key "openai/o3": it is first given on line 12; keep one of the two (a key may appear once in a map)',
    'routes.yaml:15:47: duplicate key "status": it is first given on line 15; keep one of the two (a key may appear once in a map)',
  ]);
});

t.test('an out-of-order model is reported at its own line, with the two lines it belongs between', async (t) => {
  // The first descent is at mistral/codestral-latest, but the key to move is the new mock/echo.
  t.strictSame(problemsOf('models-order-new-key.yaml'), [
    'routes.yaml:14:3: models."mock/echo": out of order: belongs between "mistral/mistral-large-latest" (line 16) and "openai/gpt-4o" (line 17), in code-point order',
  ]);
});

t.test('every key to move is reported, each with its place; first and last places are named as such', async (t) => {
  t.strictSame(problemsOf('models-order.yaml'), [
    'routes.yaml:7:3: models."openai/gpt-4o": out of order: belongs first, before "openai/gpt-4o-mini" (line 6), in code-point order',
    'routes.yaml:9:3: models."openai/o3": out of order: belongs between "openai/gpt-4o-mini" (line 6) and "openai/o4-mini" (line 8), in code-point order',
  ]);
  t.strictSame(problemsOf('models-order-ends.yaml'), [
    'routes.yaml:7:3: models."openai/o4-mini": out of order: belongs last, after "openai/gpt-5" (line 10), in code-point order',
    'routes.yaml:11:3: models."openai/chatgpt-4o-latest": out of order: belongs first, before "openai/gpt-4.1" (line 8), in code-point order',
  ]);
});

t.test('models keys in locale order but not code-point order are rejected', async (t) => {
  t.ok('openai/alpha'.localeCompare('openai/Beta') < 0, 'locale order accepts this file');
  t.strictSame(problemsOf('models-order-case.yaml'), [
    'routes.yaml:8:3: models."openai/Beta": out of order: belongs first, before "openai/alpha" (line 7), in code-point order',
  ]);
});

t.test('api_key_env and base_url_env must be environment variable names', async (t) => {
  const hint = 'is not an environment variable name (A-Z, 0-9 and _, not starting with a digit)';
  t.strictSame(problemsOf('env-names.yaml'), [
    `routes.yaml:5:19: providers.local.base_url_env: "1LOCAL_URL" ${hint}`,
    `routes.yaml:8:18: providers.openai.api_key_env: "openai_api_key" ${hint}`,
    `routes.yaml:9:19: providers.openai.base_url_env: "OPENAI-BASE-URL" ${hint}`,
  ]);
});

t.test('unknown keys are reported wherever they are', async (t) => {
  t.strictSame(problemsOf('unknown-keys.yaml'), [
    'routes.yaml:2:1: unknown key "colour"',
    'routes.yaml:6:5: providers.openai: unknown key "api_ky_env"',
    'routes.yaml:8:117: providers.openai.errors."429": unknown key "retri"',
    'routes.yaml:10:20: models."openai/gpt-4o": unknown key "upstream"',
    'routes.yaml:12:3: defaults: unknown key "timeout"',
    'routes.yaml:14:99: errors.default: unknown key "extra"',
  ]);
});

t.test('missing required top-level keys are all named', async (t) => {
  t.strictSame(problemsOf('missing-top-level.yaml'), [
    'routes.yaml:2:1: top level: missing required key "version"',
    'routes.yaml:2:1: top level: missing required key "providers"',
    'routes.yaml:2:1: top level: missing required key "models"',
    'routes.yaml:2:1: top level: missing required key "errors"',
  ]);
});

t.test('missing required nested keys: errors.default, a base_url, a rule field', async (t) => {
  t.strictSame(problemsOf('missing-nested.yaml'), [
    'routes.yaml:3:3: providers.openai: needs base_url (one endpoint) or endpoints (several)',
    'routes.yaml:7:1: errors: missing required key "default"',
    'routes.yaml:8:3: errors."429": missing required key "gateway_code"',
  ]);
});

t.test('an error rule answers a status from 400 to 599', async (t) => {
  t.strictSame(problemsOf('error-status.yaml'), [
    'routes.yaml:8:20: errors."429".status: must be >= 400',
    'routes.yaml:11:22: errors.default.status: must be <= 599',
  ]);
});

t.test('error keys: a status, 4xx or 5xx, and default only at the top level', async (t) => {
  const rule = 'an error key is an HTTP status ("429"), a class ("4xx", "5xx") or "default" (top level only)';
  t.strictSame(problemsOf('error-keys.yaml'), [
    `routes.yaml:7:7: providers.openai.errors: invalid key "default": ${rule}`,
    `routes.yaml:11:3: errors: invalid key "4xy": ${rule}`,
    `routes.yaml:12:3: errors: invalid key "600": ${rule}`,
  ]);
});

t.test('base_url is a plain http(s) URL', async (t) => {
  const plain = 'must not carry credentials, a query or a fragment (use api_key_env and headers)';
  t.strictSame(problemsOf('base-url.yaml'), [
    `routes.yaml:4:15: providers.creds.base_url: ${plain}`,
    `routes.yaml:6:15: providers.fragment.base_url: ${plain}`,
    'routes.yaml:8:15: providers.ftp.base_url: "ftp://files.example.com/v1" is not an http:// or https:// URL',
    `routes.yaml:10:15: providers.query.base_url: ${plain}`,
    'routes.yaml:12:15: providers.relative.base_url: "api.example.com/v1" is not an http:// or https:// URL',
  ]);
});

t.test('base_url ending in a bare "?" or "#" is rejected too', async (t) => {
  // URL reports an empty search and hash for these, yet the gateway would call .../v1?/chat/completions.
  const plain = 'must not carry credentials, a query or a fragment (use api_key_env and headers)';
  t.strictSame(problemsOf('base-url-empty-query.yaml'), [
    `routes.yaml:5:15: providers.fragment.base_url: ${plain}`,
    `routes.yaml:7:15: providers.query.base_url: ${plain}`,
  ]);
});

t.test('static headers cannot replace what the gateway sends', async (t) => {
  t.strictSame(problemsOf('headers.yaml'), [
    'routes.yaml:11:7: providers.openai.headers.Host: is set by the gateway and cannot be overridden',
    'routes.yaml:12:7: providers.openai.headers.Content-Length: is set by the gateway and cannot be overridden',
    'routes.yaml:13:7: providers.openai.headers.Authorization: conflicts with api_key_env, which sends Authorization',
    'routes.yaml:18:16: providers.other.headers.authorization: conflicts with api_key_env, which sends Authorization',
    'routes.yaml:18:49: providers.other.headers.x-request-id: is set by the gateway and cannot be overridden',
  ]);
});

t.test('a provider id is lower-case letters, digits and dashes', async (t) => {
  t.strictSame(problemsOf('provider-id.yaml'), [
    'routes.yaml:3:3: providers: invalid key "Bad_Id": a provider id is lower-case letters, digits and dashes, starting with a letter or digit',
  ]);
});

t.test('every problem of a file is reported, in file order', async (t) => {
  t.strictSame(problemsOf('many-problems.yaml'), [
    'routes.yaml:5:15: providers.openai.base_url: must not carry credentials, a query or a fragment (use api_key_env and headers)',
    'routes.yaml:6:18: providers.openai.api_key_env: "openai_key" is not an environment variable name (A-Z, 0-9 and _, not starting with a digit)',
    'routes.yaml:7:16: providers.openai.headers.Host: is set by the gateway and cannot be overridden',
    'routes.yaml:10:3: models."openai/gpt-4o": out of order: belongs first, before "openai/gpt-4o-mini" (line 9), in code-point order',
    'routes.yaml:11:3: models."opnai/o3": unknown provider "opnai"',
    'routes.yaml:12:3: duplicate key "opnai/o3": it is first given on line 11; keep one of the two (a key may appear once in a map)',
    'routes.yaml:14:3: defaults: unknown key "timeout"',
    'routes.yaml:16:3: errors: invalid key "4xy": an error key is an HTTP status ("429"), a class ("4xx", "5xx") or "default" (top level only)',
    'routes.yaml:17:22: errors.default.status: must be <= 599',
  ]);
});

t.test('YAML that does not parse is reported with its position', async (t) => {
  const result = compileRoutes('version: 1\nproviders: [\n');
  t.equal(result.ok, false);
  if (!result.ok) {
    t.equal(result.problems.length, 1);
    t.match(result.problems[0], { line: 3, col: 1, message: /^YAML: / });
  }
});

t.test('an empty file is rejected at 1:1', async (t) => {
  const result = compileRoutes('');
  t.equal(result.ok, false);
  if (!result.ok) t.match(result.problems, [{ line: 1, col: 1 }]);
});

t.test('strings the request log holds as they are have a length limit, so every log line has one', async (t) => {
  const longProvider = `p${'r'.repeat(64)}`;
  const longModel = `${longProvider}/${'m'.repeat(256)}`;
  const text = [
    'version: 1',
    'providers:',
    `  ${longProvider}:`,
    '    base_url: https://example.com/v1',
    `    api_key_env: ${'K'.repeat(129)}`,
    'models:',
    `  ${longModel}:`,
    'errors:',
    `  default: { status: 502, type: server_error, code: upstream_error, gateway_code: ${'c'.repeat(65)} }`,
  ].join('\n');
  const result = compileRoutes(text);
  t.notOk(result.ok);
  const problems = result.ok ? [] : result.problems.map((problem) => formatProblem('routes.yaml', problem));
  t.match(problems, [
    /^routes\.yaml:3:3: providers: key "prr+…" is longer than 64 characters$/,
    /^routes\.yaml:5:18: providers\.\S+\.api_key_env: is longer than 128 characters$/,
    /^routes\.yaml:7:3: models: key "prr+…" is longer than 256 characters$/,
    /^routes\.yaml:9:\d+: errors\.default\.gateway_code: is longer than 64 characters$/,
  ]);
  t.equal(problems.length, 4, problems.join('\n'));
});

t.test('dialect, auth and capabilities resolve into the tables (issue 11)', async (t) => {
  const tables = tablesOf(t, fixture('dialects.yaml'));
  t.match(tables.providers['anthropic'], {
    dialect: 'anthropic',
    auth: { header: 'x-api-key', scheme: 'raw' },
    headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' },
  });
  t.strictSame(tables.providers['anthropic-pinned']?.auth, { header: 'authorization', scheme: 'bearer' }, 'auth overrides the dialect default');
  t.strictSame(tables.providers['anthropic-pinned']?.headers, { 'Anthropic-Version': '2024-01-01' }, 'a header of any case replaces the dialect default');
  t.strictSame(tables.providers['azure']?.auth, { header: 'api-key', scheme: 'raw' });
  t.strictSame(tables.providers['azure']?.headers, { Authorization: 'Bearer static-token' }, 'Authorization is free when the key goes elsewhere');
  t.match(tables.providers['azure'], { dialect: 'openai' });
  t.equal(tables.providers['local']?.auth, null, 'no key, no auth');
  t.strictSame(tables.models, {
    'anthropic-pinned/claude-x': { provider: 'anthropic-pinned', upstreamModel: 'claude-x', maxOutputTokens: 8192, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
    'anthropic/claude-haiku-4-5': { provider: 'anthropic', upstreamModel: 'claude-haiku-4-5', maxOutputTokens: 64000, reasoning: 'budget', fallback: [], deprecated: null, allowFields: [], price: null },
    'anthropic/claude-opus-4-7': { provider: 'anthropic', upstreamModel: 'claude-opus-4-7', maxOutputTokens: 128000, reasoning: 'adaptive', fallback: [], deprecated: null, allowFields: [], price: null },
    'azure/gpt-4o': { provider: 'azure', upstreamModel: 'gpt-4o', maxOutputTokens: 16384, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
    'local/llama3.2': { provider: 'local', upstreamModel: 'llama3.2', maxOutputTokens: null, reasoning: 'none', fallback: [], deprecated: null, allowFields: [], price: null },
  });
});

t.test('auth: a scheme or a header name, never without a key, never a header the gateway sets (issue 11)', async (t) => {
  const anyOf = "must be bearer, google, aws or { header: NAME }, NAME a header name (letters, digits and !#$%&'*+.^_`|~-)";
  t.strictSame(problemsOf('auth.yaml'), [
    'routes.yaml:7:16: providers.anthropic.headers.X-Api-Key: conflicts with api_key_env, which sends x-api-key',
    'routes.yaml:12:16: providers.azure.headers.Api-Key: conflicts with api_key_env, which sends api-key',
    'routes.yaml:15:5: providers.keyless.auth: needs api_key_env, the key it sends',
    'routes.yaml:19:21: providers.reserved.auth.header: is set by the gateway and cannot carry the key',
    `routes.yaml:23:11: providers.spaced.auth: ${anyOf}`,
    'routes.yaml:25:14: providers.wrong.dialect: must be one of "openai", "anthropic", "gemini", "bedrock"',
    `routes.yaml:28:11: providers.wrong.auth: ${anyOf}`,
  ]);
});

t.test('max_output_tokens and reasoning: checked, and required for an anthropic-dialect model (issue 11)', async (t) => {
  t.strictSame(problemsOf('capabilities.yaml'), [
    'routes.yaml:12:3: models."anthropic/claude-b": needs max_output_tokens (its provider speaks the anthropic dialect, which must send max_tokens)',
    'routes.yaml:13:3: models."anthropic/claude-c": needs max_output_tokens (its provider speaks the anthropic dialect, which must send max_tokens)',
    'routes.yaml:14:44: models."anthropic/claude-d".max_output_tokens: must be >= 1',
    'routes.yaml:15:38: models."openai/gpt-x".max_output_tokens: must be integer',
    'routes.yaml:15:54: models."openai/gpt-x".reasoning: must be one of "none", "budget", "adaptive", "levels"',
  ]);
});

t.test('the shipped routes.yaml reaches Claude natively (issue 11)', async (t) => {
  const tables = tablesOf(t, readFileSync(new URL('../../../routes.yaml', import.meta.url), 'utf8'));
  t.match(tables.providers['anthropic'], {
    dialect: 'anthropic',
    endpoints: [{ baseUrl: 'https://api.anthropic.com/v1' }],
    auth: { header: 'x-api-key', scheme: 'raw' },
    headers: { 'anthropic-version': '2023-06-01' },
  });
  const claude = Object.entries(tables.models).filter(([, model]) => model?.provider === 'anthropic');
  t.ok(claude.length >= 3, 'several Claude models');
  for (const [routingString, model] of claude) {
    t.ok(model && model.maxOutputTokens !== null && model.maxOutputTokens >= 1024, `${routingString} has its output limit`);
    t.not(model?.reasoning, 'none', `${routingString} thinks`);
  }
  t.strictSame(tables.errors['529'], { status: 503, type: 'server_error', code: 'upstream_overloaded', gatewayCode: 'provider_overloaded', retry: true });
});
