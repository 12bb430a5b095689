import type { Change, ItemTraffic, JsonValue, Review } from './change.js';

/** Rows per section: keeps the comment under GitHub's 64 KB; --json always lists everything. */
const MAX_ROWS = 80;
/** Longest value shown in a cell (a header value can be long). */
const MAX_CELL_CHARS = 160;

const SECTIONS = [
  { key: 'breaking', title: 'Breaking: callers that work today fail after this change' },
  { key: 'behaviour', title: 'Behaviour changes: callers keep working but get something different' },
  { key: 'safe', title: 'Safe' },
] as const;

/** Callers named in a traffic cell; the rest are counted. */
const MAX_CALLERS_SHOWN = 5;

/** With --traffic: the window (`7 d`) and where the figures come from, or why there are none. */
export interface TrafficNote {
  readonly window: string;
  readonly source?: string;
  readonly unavailable?: string;
}

/** The pull-request form: a one-line summary, then the three sections as short tables, breaking first. */
export function reviewMarkdown(review: Review, labels: { old: string; new: string }, traffic?: TrafficNote): string {
  const out = [`### routes.yaml review: ${summaryLine(review)}`, '', `${code(labels.old)} → ${code(labels.new)}`, ''];
  if (traffic?.unavailable !== undefined) out.push(`Traffic: not available (${code(traffic.unavailable)}); the items are not weighted.`, '');
  else if (traffic?.source !== undefined) out.push(`Traffic over the last ${traffic.window}: ${code(traffic.source)}.`, '');
  const weighted = traffic?.source !== undefined && traffic.unavailable === undefined;
  const total = review.breaking.length + review.behaviour.length + review.safe.length;
  if (total === 0) out.push('No change that callers can see.', '');
  for (const { key, title } of SECTIONS) {
    const changes = review[key];
    if (changes.length === 0) continue;
    if (weighted) out.push(`#### ${title}`, '', `| Kind | Routing string, provider or caller | What it does | Line | Traffic (${traffic.window}) |`, '|---|---|---|---|---|');
    else out.push(`#### ${title}`, '', '| Kind | Routing string, provider or caller | What it does | Line |', '|---|---|---|---|');
    for (const change of changes.slice(0, MAX_ROWS)) {
      const row = `| \`${change.kind}\` | ${subject(change)} | ${describe(change)} | ${change.line ?? ''} |`;
      out.push(weighted ? `${row} ${trafficCell(change.traffic, traffic.window)} |` : row);
    }
    if (changes.length > MAX_ROWS) out.push('', `… and ${changes.length - MAX_ROWS} more (\`npm run review -- --json\` lists every one).`);
    out.push('');
  }
  if (review.breaking.length > 0) out.push('**Breaking**: merging this needs a reviewer\'s explicit approval (the review exits 1).', '');
  return `${out.join('\n')}`;
}

/** `5 requests: \`search-team\` 3, \`batch-team\` 2`, or `not called in 7 d`; a price change adds the spend it moves. */
function trafficCell(traffic: ItemTraffic | undefined, window: string): string {
  if (!traffic || traffic.requests === 0) return `not called in ${window}`;
  const callers = Object.entries(traffic.callers);
  const named = callers.slice(0, MAX_CALLERS_SHOWN).map(([caller, requests]) => `${caller === '' ? 'no caller' : code(caller)} ${count(requests)}`);
  const more = callers.length > MAX_CALLERS_SHOWN ? `, ${callers.length - MAX_CALLERS_SHOWN} more callers` : '';
  const spend = traffic.spendMovedUsd === undefined ? '' : `; cost ${usd(traffic.spendUsd ?? 0)} USD, ${traffic.spendMovedUsd >= 0 ? '+' : '−'}${usd(Math.abs(traffic.spendMovedUsd))} USD at the new price`;
  return `${count(traffic.requests)} request${traffic.requests === 1 ? '' : 's'}: ${named.join(', ')}${more}${spend}`;
}

const count = (figure: number) => figure.toLocaleString('en-US');
const usd = (figure: number) => (figure !== 0 && Math.abs(figure) < 0.01 ? figure.toPrecision(2) : figure.toFixed(2));

/** `2 breaking · 1 behaviour change · 3 safe` */
export function summaryLine(review: Review): string {
  const behaviour = review.behaviour.length;
  return `${review.breaking.length} breaking · ${behaviour} behaviour change${behaviour === 1 ? '' : 's'} · ${review.safe.length} safe`;
}

function subject(change: Change): string {
  const parts = [change.caller && `caller ${code(change.caller)}`, change.model && code(change.model), !change.model && change.provider ? `provider ${code(change.provider)}` : undefined];
  return parts.filter(Boolean).join(' ') || (change.kind.startsWith('callers_') ? 'all callers' : change.kind === 'field_changed' ? 'the tables' : 'all providers');
}

/** One sentence per kind, from before and after (docs/reviewing-a-change.md lists them all). */
function describe(change: Change): string {
  const { before, after } = change;
  const field = (value: JsonValue | undefined, key: string): JsonValue | undefined =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { [key: string]: JsonValue })[key] : undefined;
  switch (change.kind) {
    case 'model_removed':
      return `removed: callers sending it get 400 \`unknown_model\`${typeof after === 'string' ? `; probable rename to ${code(after)} (same provider and upstream model ${code(String(field(before, 'upstreamModel')))})` : ''}`;
    case 'planned_removal':
      return `removed after its sunset (${text(field(before, 'sunset'))})${field(before, 'replacement') ? `; replacement ${code(String(field(before, 'replacement')))}` : ''}${typeof after === 'string' ? `; probable rename to ${code(after)}` : ''}`;
    case 'output_limit_lowered':
      return `\`max_output_tokens\` lowered: ${text(before)} → ${text(after)}`;
    case 'reasoning_removed':
      return `\`reasoning\` ${text(before)} → none: requests asking for reasoning are refused or ignored`;
    case 'dialect_changed':
      return `\`dialect\` ${text(before)} → ${text(after)}: every model of the provider is sent another wire format`;
    case 'caller_lost_model':
      return 'can no longer use this model (400)';
    case 'caller_key_removed':
      return `a key it used is no longer accepted (401): ${text(before)} → ${text(after)}`;
    case 'model_repointed':
      return `now reaches upstream model ${code(String(after))} (was ${code(String(before))})`;
    case 'fallback_changed':
      return `fallback ${list(before)} → ${list(after)}`;
    case 'error_rule_changed':
      return `provider status ${text(field(before, 'providerStatus'))}: ${rule(before)} → ${rule(after)}`;
    case 'caller_gained_model':
      return 'can now use this model (access widened)';
    case 'caller_key_added':
      return `accepts another key: ${text(before)} → ${text(after)}`;
    case 'limits_changed':
      return `limits and budget ${text(before)} → ${text(after)}`;
    case 'model_deprecated':
      return `deprecated: answers now carry Deprecation (since ${text(field(after, 'since'))}) and Sunset (${text(field(after, 'sunset'))})${field(after, 'replacement') ? `, replacement ${code(String(field(after, 'replacement')))}` : ''}`;
    case 'deprecation_changed':
      return after === null ? 'no longer deprecated' : `deprecation ${text(before)} → ${text(after)}`;
    case 'fields_allowed':
      return `callers may now send gated native fields ${list(before)} → ${list(after)} (spend or reach widened)`;
    case 'fields_disallowed':
      return `gated native fields no longer allowed (400): ${list(before)} → ${list(after)}`;
    case 'price_changed':
      return `price per million tokens ${text(before)} → ${text(after)}: costs and budgets change`;
    case 'max_attempts_changed':
      return `\`max_attempts\` ${text(before)} → ${text(after)}: how many endpoints and fallbacks one request may try`;
    case 'headers_changed':
      return `static headers sent upstream ${text(before)} → ${text(after)}`;
    case 'endpoint_changed':
      return `endpoint ${code(String(field(after, 'name')))}: ${changedFields(before, after)}`;
    case 'key_env_changed':
      return `endpoint ${code(String(field(after, 'endpoint')))} reads its key from ${text(field(after, 'apiKeyEnv'))} (was ${text(field(before, 'apiKeyEnv'))}): breaking until ${text(field(after, 'apiKeyEnv'))} is set where the gateway runs (every request to it fails until then); set it, then approve`;
    case 'key_env_removed':
      return `endpoint ${code(String(field(after, 'endpoint')))} sends no key any more (was ${text(field(before, 'apiKeyEnv'))}): a provider that needs one answers 401`;
    case 'key_header_changed':
      return `the key goes upstream as ${text(after)} (was ${text(before)}): a provider that expects it where it was answers 401`;
    case 'timeout_lowered':
      return `${changedFields(before, after)}: requests or streams that take longer are cut off`;
    case 'breaker_stricter':
      return `circuit breaker ${text(before)} → ${text(after)}: an endpoint is taken out sooner or for longer`;
    case 'stream_usage_changed':
      return after === false
        ? '`stream_usage` off: streams are no longer asked for usage, so a stream whose caller did not ask for it is not counted or charged (tokens per minute, budgets)'
        : '`stream_usage` on: streams are asked for usage (hidden from callers who did not ask), so they are counted and charged';
    case 'kind_changed':
      return `\`kind\` ${text(before)} → ${text(after)}: its callers' requests on the endpoint of its old kind are refused (400)`;
    case 'api_changed':
      return after === 'responses'
        ? '`api: responses`: POST /v1/responses now goes natively to the provider\'s /responses (was translated to chat)'
        : 'POST /v1/responses is now translated to a chat request (was native `api: responses`): what chat cannot express is refused';
    case 'thinking_budget_narrowed':
      return `\`thinking_budget\` ${text(before)} → ${text(after)}: integer reasoning_effort budgets outside the new range are refused (400)`;
    case 'thinking_changed':
      return `thinking ${text(before)} → ${text(after)}: reasoning_effort is mapped to other thinking`;
    case 'callers_declared':
      return `routes.yaml now declares callers (${list(field(after, 'callers'))}): every key of GATEWAY_API_KEYS (and anonymous access) gets 401, and the gateway refuses to start while GATEWAY_API_KEYS is set; hand each caller its key first`;
    case 'callers_removed':
      return `routes.yaml no longer declares callers (${list(field(before, 'callers'))}): their keys get 401 unless GATEWAY_API_KEYS holds them, and its keys may use every model with no limits or budgets`;
    case 'caller_added':
      return `new caller (${text(field(after, 'keys'))} key digest(s), key_env ${text(field(after, 'keyEnv'))}) that may use ${list(field(after, 'models'))}`;
    case 'caller_served_outside_models':
      return `asking for this model, it may be answered by its fallback ${code(String(after))}, which is not in its models`;
    case 'field_changed':
      return `${code(String(change.field))} ${text(before)} → ${text(after)} (a field the review does not classify yet: judge it yourself)`;
    case 'model_added':
      return `added${typeof before === 'string' ? ` (probable rename of ${code(before)})` : ''}: ${code(String(field(after, 'provider')))} upstream ${code(String(field(after, 'upstreamModel')))}, max_output_tokens ${text(field(after, 'maxOutputTokens'))}, reasoning ${text(field(after, 'reasoning'))}`;
    case 'provider_added':
      return `added: dialect ${text(field(after, 'dialect'))}, endpoints ${list(field(after, 'endpoints'))}; traffic goes to ${list(field(after, 'hosts'))}`;
    case 'provider_removed':
      return `removed with its ${text(field(before, 'models'))} model(s)`;
    case 'endpoint_added':
      return `endpoint ${code(String(field(after, 'name')))} added: traffic goes to ${code(String(field(after, 'host')))} (${code(String(field(after, 'baseUrl')))}), weight ${text(field(after, 'weight'))}`;
    case 'endpoint_removed':
      return `endpoint ${code(String(field(before, 'name')))} removed (${code(String(field(before, 'baseUrl')))})`;
    case 'provider_changed':
    case 'capability_changed':
      return changedFields(before, after);
    default:
      return `${text(before)} → ${text(after)}`;
  }
}

function changedFields(before: JsonValue | undefined, after: JsonValue | undefined): string {
  const was = before !== null && typeof before === 'object' && !Array.isArray(before) ? (before as { [key: string]: JsonValue }) : {};
  const now = after !== null && typeof after === 'object' && !Array.isArray(after) ? (after as { [key: string]: JsonValue }) : {};
  return Object.keys(now)
    .filter((key) => JSON.stringify(was[key]) !== JSON.stringify(now[key]))
    .map((key) => `${key} ${text(was[key])} → ${text(now[key])}`)
    .join('; ');
}

function rule(value: JsonValue | undefined): string {
  const r = value as { status?: number; code?: string; retry?: boolean } | undefined;
  return r?.status === undefined ? 'no rule' : `${r.status} ${code(String(r.code))} x-should-retry: ${String(r.retry)}`;
}

function list(value: JsonValue | undefined): string {
  return Array.isArray(value) && value.length > 0 ? value.map((item) => code(String(item))).join(', ') : 'none';
}

/** A value as inline code (JSON for objects), cut to a bounded length. */
function text(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return 'none';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

/**
 * Inline code that stays inside its table cell and renders nothing: the values come from a pull request, so
 * a `|` must not open a cell and no backtick run may close the span early (the fence is longer than any run).
 */
export function code(value: string): string {
  const cut = value.length > MAX_CELL_CHARS ? `${value.slice(0, MAX_CELL_CHARS)}…` : value;
  const clean = cut.replace(/[\u0000-\u001f\u007f]/g, '?').replace(/\|/g, '\\|');
  const longestRun = Math.max(0, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const pad = clean.startsWith('`') || clean.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${clean}${pad}${fence}`;
}
