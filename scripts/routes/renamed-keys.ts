import type { LoadedRoutes } from './load-routes.js';
import type { Problem } from './problem.js';

/**
 * What a release renamed or removed in routes.yaml, as data: `npm run check` (and build and review) names each
 * one it finds in a file, with what to write instead, so an upgrade is one pass over its messages.
 * Add an entry with every such change (and its line in docs/upgrading.md).
 */
export interface Renamed {
  /** Where it sits, keys from the top; `*` stands for any one key or list item (a provider id, an endpoint). */
  readonly at: readonly string[];
  /**
   * A renamed or removed key: absent, and `at` ends with the old key (the schema no longer accepts it: an error).
   * A renamed value: the value it had (still valid, but it means something else now: a warning).
   */
  readonly value?: string;
  /** The new key or value; absent when it was removed. */
  readonly to?: string;
  /** The release that made the change. */
  readonly version: string;
  /** What to write instead, starting with the line itself. */
  readonly write: string;
}

/** Why a gateway must not read the variables its own clients read. */
const CLIENTS_READ = (variable: string, clients: string) =>
  `${variable} is the variable ${clients} read, so a shell that points them at this gateway would have the gateway send its traffic to itself`;

/** base_url_env sits on a provider and on each of its endpoints. */
const BASE_URL_ENV_PLACES = [
  ['providers', '*', 'base_url_env'],
  ['providers', '*', 'endpoints', '*', 'base_url_env'],
] as const;

function baseUrlEnvRenamed(from: string, to: string, clients: string): Renamed[] {
  return BASE_URL_ENV_PLACES.map((at) => ({ at, value: from, to, version: '0.2.0', write: `base_url_env: ${to}, and set ${to} where the gateway runs (${CLIENTS_READ(from, clients)})` }));
}

export const RENAMED: readonly Renamed[] = [
  ...baseUrlEnvRenamed('ANTHROPIC_BASE_URL', 'GATEWAY_ANTHROPIC_BASE_URL', "Claude Code and Anthropic's SDKs"),
  ...baseUrlEnvRenamed('OPENAI_BASE_URL', 'GATEWAY_OPENAI_BASE_URL', "OpenAI's SDKs and most OpenAI-compatible tools"),
];

/** Every renamed or removed key in the file (errors) and every renamed value (warnings), at their line and column. */
export function renamedInFile(loaded: LoadedRoutes, table: readonly Renamed[] = RENAMED): { keys: Problem[]; values: Problem[] } {
  const keys: Problem[] = [];
  const values: Problem[] = [];
  for (const entry of table) {
    const key = entry.value === undefined;
    for (const path of pathsMatching(loaded.data, key ? entry.at.slice(0, -1) : entry.at)) {
      const found = key ? [...path, entry.at.at(-1)!] : path;
      const value = valueAt(loaded.data, found);
      if (key ? value === undefined : value !== entry.value) continue;
      const old = key ? entry.at.at(-1)! : entry.value!;
      const change = entry.to === undefined ? 'was removed' : `was renamed to ${JSON.stringify(entry.to)}`;
      (key ? keys : values).push({ ...loaded.locate(found, key ? 'key' : 'value'), message: `${JSON.stringify(old)} ${change} in ${entry.version}: write ${entry.write}` });
    }
  }
  return { keys, values };
}

/** The paths in `data` that `pattern` names, `*` taking every key of a map and every index of a list. */
function pathsMatching(data: unknown, pattern: readonly string[], prefix: (string | number)[] = []): (string | number)[][] {
  if (pattern.length === 0) return [prefix];
  if (data === null || typeof data !== 'object') return [];
  const [head, ...rest] = pattern;
  const children: [string | number, unknown][] = Array.isArray(data) ? data.map((item, i) => [i, item]) : Object.entries(data);
  return children.filter(([name]) => head === '*' || name === head).flatMap(([name, child]) => pathsMatching(child, rest, [...prefix, name]));
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  let here = data;
  for (const segment of path) {
    if (here === null || typeof here !== 'object' || !Object.hasOwn(here, segment)) return undefined;
    here = (here as Record<string | number, unknown>)[segment];
  }
  return here;
}
