import { DIALECT_DEFAULTS } from '../../src/dialects/dialect-defaults.js';
import { BASE_URL_PATTERN, baseUrlProblem } from '../../src/routing/base-url-rules.js';
import { checkAllowFields } from './check-allow-fields.js';
import { checkBedrock } from './cross-check-bedrock.js';
import { checkDeprecations } from './cross-check-deprecation.js';
import { checkCallers } from './callers.js';
import { checkBreaker, checkEndpoints, checkFallbacks, hasKey } from './cross-check-failover.js';
import type { LoadedRoutes } from './load-routes.js';
import { checkThinking } from './cross-check-thinking.js';
import { misplacedKeys } from './model-order.js';
import { formatPath, type Problem } from './problem.js';

/** Headers the gateway sets itself or that describe one hop only; a static header must not override them. */
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'content-type', 'content-encoding', 'transfer-encoding', 'connection', 'keep-alive',
  'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-connection', 'x-request-id', 'accept-encoding',
]);

/**
 * The checks a schema cannot express: references between sections, ordering, URL sanity.
 * Reads the data defensively so that it reports alongside schema problems, not only after they are fixed.
 * `knownModels` (the roster of the last committed file, when there is one) says which keys are new.
 */
export function crossCheckRoutes(loaded: LoadedRoutes, knownModels?: ReadonlySet<string>): Problem[] {
  const routes = { providers: mapAt(loaded.data, 'providers'), models: mapAt(loaded.data, 'models') };
  const problems: Problem[] = [];
  const report = (path: (string | number)[], at: 'key' | 'value', message: string) =>
    problems.push({ ...loaded.locate(path, at), message: `${formatPath(path)}: ${message}` });

  for (const [id, value] of Object.entries(routes.providers)) {
    const provider = mapAt({ value }, 'value');
    // A value that is not http(s) at all is the schema's to report (with the same pattern).
    const baseUrl = provider['base_url'];
    const problem = typeof baseUrl === 'string' && BASE_URL_PATTERN.test(baseUrl) ? baseUrlProblem(baseUrl) : null;
    if (problem) report(['providers', id, 'base_url'], 'value', problem);
    checkEndpoints(id, provider, report);
    checkBedrock(id, provider, report);
    checkAllowFields(['providers', id, 'allow_fields'], provider['allow_fields'], provider['dialect'], report);
    checkBreaker(['providers', id, 'breaker'], provider['breaker'], mapAt(loaded.data, 'defaults')['breaker'], report);
    const authHeader = keyHeader(provider);
    const google = provider['auth'] === 'google';
    // google and aws take their credentials elsewhere (aws is checked by checkBedrock).
    const keyless = google || provider['auth'] === 'aws' || (provider['dialect'] === 'bedrock' && provider['auth'] === undefined);
    if (provider['auth'] !== undefined && !keyless && !hasKey(provider)) report(['providers', id, 'auth'], 'key', 'needs api_key_env, the key it sends');
    if (google && hasKey(provider)) report(['providers', id, 'auth'], 'value', 'google sends an OAuth2 token from Google credentials: remove api_key_env');
    if (authHeader && RESERVED_HEADERS.has(authHeader.toLowerCase())) report(['providers', id, 'auth', 'header'], 'value', 'is set by the gateway and cannot carry the key');
    const seen = new Set<string>();
    for (const name of Object.keys(mapAt(provider, 'headers'))) {
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower)) report(['providers', id, 'headers', name], 'key', 'is set by the gateway and cannot be overridden');
      else if ((hasKey(provider) || keyless) && lower === authHeader?.toLowerCase()) report(['providers', id, 'headers', name], 'key', `conflicts with api_key_env, which sends ${authHeader}`);
      else if (seen.has(lower)) report(['providers', id, 'headers', name], 'key', 'is given twice (header names ignore case)');
      seen.add(lower);
    }
  }

  const modelKeys = Object.keys(routes.models);
  for (const model of modelKeys) {
    const segments = model.split('/');
    if (segments.length < 2 || segments.some((segment) => segment === '')) {
      report(['models', model], 'key', 'a routing string is <provider>/<model> with no empty segment');
    } else if (/[\s\u0000-\u001f\u007f]/.test(model)) {
      report(['models', model], 'key', 'a routing string has no white space or control characters');
    } else if (!Object.hasOwn(routes.providers, segments[0]!)) {
      report(['models', model], 'key', `unknown provider ${JSON.stringify(segments[0])}`);
    } else if (mapAt(routes.providers, segments[0]!)['dialect'] === 'anthropic' && mapAt(routes.models, model)['max_output_tokens'] === undefined) {
      // Anthropic requires max_tokens; a guessed default would silently cut answers short.
      report(['models', model], 'key', 'needs max_output_tokens (its provider speaks the anthropic dialect, which must send max_tokens)');
    }
    if (Object.hasOwn(routes.providers, segments[0] ?? '')) checkThinking(model, mapAt(routes.models, model), mapAt(routes.providers, segments[0]!)['dialect'], report);
    const dialect = Object.hasOwn(routes.providers, segments[0] ?? '') ? (mapAt(routes.providers, segments[0]!)['dialect'] ?? 'openai') : 'openai';
    // Only OpenAI's own API (and its compatibles that copy it) serves /responses: another dialect has no such path.
    if (mapAt(routes.models, model)['api'] !== undefined && dialect !== 'openai') {
      report(['models', model, 'api'], 'key', `is for models of an openai-dialect provider (this one speaks ${String(dialect)}): only OpenAI's API serves /responses`);
    }
  }
  for (const model of modelKeys) {
    const prefix = model.split('/')[0]!;
    if (Object.hasOwn(routes.providers, prefix)) checkAllowFields(['models', model, 'allow_fields'], mapAt(routes.models, model)['allow_fields'], mapAt(routes.providers, prefix)['dialect'], report);
  }
  checkFallbacks(routes.models, report);
  checkDeprecations(routes.models, report);
  checkCallers(loaded.data, report);
  checkBreaker(['defaults', 'breaker'], mapAt(loaded.data, 'defaults')['breaker'], undefined, report);
  // Code-point order (not locale order) keeps every roster change a one-line diff anyone can place.
  const lineOf = (key: string) => loaded.locate(['models', key], 'key').line;
  for (const { key, after, before } of misplacedKeys(modelKeys, knownModels)) {
    const place =
      after === null ? `first, before ${JSON.stringify(before)} (line ${lineOf(before!)})`
      : before === null ? `last, after ${JSON.stringify(after)} (line ${lineOf(after)})`
      : `between ${JSON.stringify(after)} (line ${lineOf(after)}) and ${JSON.stringify(before)} (line ${lineOf(before)})`;
    report(['models', key], 'key', `out of order: belongs ${place}, in code-point order`);
  }
  return problems;
}

/** The header that carries the provider's key (routes.yaml auth, else the dialect's default); undefined when auth is malformed (the schema reports it). */
function keyHeader(provider: Record<string, unknown>): string | undefined {
  const auth = provider['auth'];
  const named = provider['dialect'];
  const dialect = typeof named === 'string' && Object.hasOwn(DIALECT_DEFAULTS, named) ? (named as keyof typeof DIALECT_DEFAULTS) : 'openai';
  const scheme = auth === undefined ? DIALECT_DEFAULTS[dialect].auth : auth;
  if (scheme === 'bearer' || scheme === 'google' || scheme === 'aws') return 'Authorization';
  const header = scheme !== null && typeof scheme === 'object' ? (scheme as Record<string, unknown>)['header'] : undefined;
  return typeof header === 'string' ? header : undefined;
}

function mapAt(data: unknown, key: string): Record<string, unknown> {
  const value = data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[key] : undefined;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
