import type { CallerTable, ModelTable, ProviderTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { readSchema } from '../schemas.js';
import { sameValue, toJson, type Change, type LineOf } from './change.js';

/** Every key of a table, as `PREFIX.key`: a field the generated types gain is a type error here until it is classified. */
type Fields<T, P extends string> = { readonly [K in keyof T & string as `${P}.${K}`]-?: string };

/** Not compared, and why: such a field differs without callers seeing anything. */
const NOT_COMPARED = 'not compared:';

const TOP: { readonly [K in keyof RouteTables]-?: string } = {
  sourceSha256: `${NOT_COMPARED} the hash of the text, which any edit changes`,
  maxAttempts: 'max_attempts_changed',
  errors: 'error_rule_changed',
  providers: 'per provider, below',
  models: 'per model, below',
  callers: 'per caller, below; callers_declared, callers_removed',
};
const PROVIDER: Fields<ProviderTable, 'providers.*'> = {
  'providers.*.id': `${NOT_COMPARED} the provider's key itself`,
  'providers.*.dialect': 'dialect_changed',
  'providers.*.endpoints': 'endpoint_added, endpoint_removed, endpoint_changed, key_env_changed, key_env_removed',
  'providers.*.auth': 'key_header_changed (with another dialect: part of dialect_changed)',
  'providers.*.region': 'key_header_changed (the region a bedrock signature is for; its default endpoint: endpoint_changed)',
  'providers.*.headers': 'headers_changed (with another dialect: part of dialect_changed)',
  'providers.*.connectTimeoutMs': 'timeout_lowered, provider_changed',
  'providers.*.timeoutMs': 'timeout_lowered, provider_changed',
  'providers.*.streamIdleTimeoutMs': 'timeout_lowered, provider_changed',
  'providers.*.errors': 'error_rule_changed',
  'providers.*.streamUsage': 'stream_usage_changed',
  'providers.*.breaker': 'breaker_stricter, provider_changed',
  'providers.*.awsSigning': 'key_header_changed (the signing region, or the variables of the AWS keys)',
};
const MODEL: Fields<ModelTable, 'models.*'> = {
  'models.*.provider': `${NOT_COMPARED} the prefix of the routing string, which is the key`,
  'models.*.upstreamModel': 'model_repointed',
  'models.*.maxOutputTokens': 'output_limit_lowered, capability_changed',
  'models.*.reasoning': 'reasoning_removed, capability_changed',
  'models.*.thinkingBudget': 'thinking_budget_narrowed, thinking_changed (with another reasoning: part of capability_changed)',
  'models.*.reasoningLevels': 'thinking_changed (with another reasoning: part of capability_changed)',
  'models.*.kind': 'kind_changed',
  'models.*.api': 'api_changed',
  'models.*.fallback': 'fallback_changed, caller_served_outside_models',
  'models.*.deprecated': 'model_deprecated, deprecation_changed',
  'models.*.allowFields': 'fields_allowed, fields_disallowed',
  'models.*.price': 'price_changed',
};
const CALLER: Fields<CallerTable, 'callers.*'> = {
  'callers.*.name': `${NOT_COMPARED} the caller's key itself`,
  'callers.*.keyDigests': 'caller_key_removed, caller_key_added',
  'callers.*.keyEnv': 'caller_key_removed, caller_key_added',
  'callers.*.models': 'caller_lost_model, caller_gained_model, caller_added, caller_served_outside_models',
  'callers.*.limits': 'limits_changed',
  'callers.*.budget': 'limits_changed',
};
/** An entry of the three maps present on one side only. */
const ENTRIES = {
  'providers.*': 'provider_added, provider_removed',
  'models.*': 'model_added, model_removed, planned_removal',
  'callers.*': 'caller_gained_model, caller_lost_model, caller_added (callers_declared, callers_removed)',
};

/** Each field of the compiled tables (`*` for a map's keys) and the kinds that report a change to it. */
export const CLASSIFIED_FIELDS: Readonly<Record<string, string>> = { ...TOP, ...ENTRIES, ...PROVIDER, ...MODEL, ...CALLER };
/** Fields with a whole table of their own: classified below, entry by entry. */
const PER_ENTRY = new Set(['providers', 'models', 'callers']);

/** A schema node with $ref followed and a nullable oneOf reduced to its non-null branch. */
type SchemaNode = { $ref?: string; oneOf?: SchemaNode[]; type?: unknown; properties?: Record<string, SchemaNode>; additionalProperties?: SchemaNode | boolean; items?: SchemaNode };
const SCHEMA = readSchema('route-tables.schema.json') as SchemaNode & { definitions: Record<string, SchemaNode> };

export function resolveSchema(node: SchemaNode | undefined): SchemaNode | undefined {
  let current = node;
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.$ref) current = SCHEMA.definitions[current.$ref.replace('#/definitions/', '')];
    else if (current.oneOf) current = current.oneOf.find((branch) => branch.type !== 'null');
    else return current;
  }
  return current;
}

export const TABLES_SCHEMA: SchemaNode = SCHEMA;

/**
 * The safety net under the classifiers: every difference between the two tables at a field no classifier claims
 * (a field added to the tables and not yet classified, or one inside a table of its own) is reported as a behaviour
 * change, `field_changed`, naming the field: never dropped.
 */
export function unclassifiedChanges(old: RouteTables, next: RouteTables, lineOf: LineOf): Change[] {
  const changes: Change[] = [];
  const walk = (pattern: string, path: string[], schema: SchemaNode | undefined, a: unknown, b: unknown): void => {
    if (sameValue(a, b)) return;
    const entry = pattern.endsWith('.*');
    if (Object.hasOwn(CLASSIFIED_FIELDS, pattern) && !PER_ENTRY.has(pattern) && (!entry || a === undefined || b === undefined)) return;
    const node = resolveSchema(schema);
    if (isRecord(a) && isRecord(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const named = node?.properties?.[key];
        const map = typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined;
        const child = named ?? map;
        walk(pattern === '' ? key : `${pattern}.${named || !map ? key : '*'}`, [...path, key], child, a[key], b[key]);
      }
      return;
    }
    const [section, name] = path;
    const subjectKey = ({ models: 'model', providers: 'provider', callers: 'caller' } as const)[section as 'models'];
    const subject = subjectKey && name !== undefined ? { [subjectKey]: name } : {};
    changes.push({ severity: 'behaviour', kind: 'field_changed', ...subject, field: path.join('.'), before: toJson(a), after: toJson(b), line: lineOf(path.slice(0, 2)) });
  };
  walk('', [], SCHEMA, old, next);
  return changes;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
