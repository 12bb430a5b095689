import type { ModelTable, RouteTables } from '../../src/generated/types/route-tables.js';
import { dateMs } from '../routes/cross-check-deprecation.js';
import { sameValue, toJson, type Change, type JsonValue, type LineOf } from './change.js';

/**
 * What happens to each routing string: removed (or planned removal, or probable rename), added,
 * repointed, capabilities, fallback and deprecation. `now` decides whether a sunset has passed.
 */
export function classifyModels(old: RouteTables, next: RouteTables, lineOf: LineOf, now: number): Change[] {
  const changes: Change[] = [];
  const removed = Object.keys(old.models).filter((model) => !Object.hasOwn(next.models, model)).sort();
  const added = Object.keys(next.models).filter((model) => !Object.hasOwn(old.models, model)).sort();
  const renames = pairRenames(removed, added, old, next);
  const renamedFrom = new Map([...renames].map(([from, to]) => [to, from]));

  for (const model of removed) {
    const entry = old.models[model]!;
    const renamedTo = renames.get(model);
    const sunsetMs = entry.deprecated ? dateMs(entry.deprecated.sunset) : null;
    const common = { model, provider: entry.provider, ...(renamedTo ? { after: renamedTo, line: lineOf(['models', renamedTo]) } : {}) };
    if (entry.deprecated && sunsetMs !== null && sunsetMs <= now) {
      changes.push({ severity: 'behaviour', kind: 'planned_removal', ...common, before: { ...entry.deprecated } });
    } else {
      changes.push({ severity: 'breaking', kind: 'model_removed', ...common, before: { provider: entry.provider, upstreamModel: entry.upstreamModel } });
    }
  }
  for (const model of added) {
    const entry = next.models[model]!;
    const from = renamedFrom.get(model);
    changes.push({
      severity: 'safe',
      kind: 'model_added',
      model,
      provider: entry.provider,
      ...(from ? { before: from } : {}),
      after: describeModel(entry),
      line: lineOf(['models', model]),
    });
  }
  for (const model of Object.keys(next.models).sort()) {
    const before = old.models[model];
    const after = next.models[model];
    if (before && after) changes.push(...compareModel(model, before, after, lineOf));
  }
  return changes;
}

/** `{reasoning}`, with a gemini model's thinking range or levels when it has them. */
function thinkingOf(entry: ModelTable): { [key: string]: JsonValue } {
  return {
    reasoning: entry.reasoning,
    ...(entry.thinkingBudget ? { thinkingBudget: { ...entry.thinkingBudget } } : {}),
    ...(entry.reasoningLevels ? { reasoningLevels: [...entry.reasoningLevels] } : {}),
  };
}

/**
 * The same reasoning mode with another range or levels (gemini models). A narrower budget range refuses (400) the
 * integer budgets it no longer holds; a wider one, or other levels, maps reasoning_effort to other thinking.
 */
function compareThinking(before: ModelTable, after: ModelTable, common: { model: string; provider: string }, at: (key?: string) => number): Change[] {
  const changes: Change[] = [];
  const was = before.thinkingBudget;
  const now = after.thinkingBudget;
  if (!sameValue(was, now)) {
    const narrowed = was !== undefined && now !== undefined && (now.min > was.min || now.max < was.max);
    changes.push({ severity: narrowed ? 'breaking' : 'behaviour', kind: narrowed ? 'thinking_budget_narrowed' : 'thinking_changed', ...common, before: toJson(was), after: toJson(now), line: at('thinking_budget') });
  }
  if (!sameValue(before.reasoningLevels, after.reasoningLevels)) {
    changes.push({ severity: 'behaviour', kind: 'thinking_changed', ...common, before: toJson(before.reasoningLevels), after: toJson(after.reasoningLevels), line: at('reasoning_levels') });
  }
  return changes;
}

/** A removed string and an added one with the same provider and upstream model: probably renamed (first match in sort order). */
function pairRenames(removed: readonly string[], added: readonly string[], old: RouteTables, next: RouteTables): Map<string, string> {
  const pairs = new Map<string, string>();
  const taken = new Set<string>();
  for (const from of removed) {
    const was = old.models[from]!;
    const to = added.find((model) => !taken.has(model) && next.models[model]!.provider === was.provider && next.models[model]!.upstreamModel === was.upstreamModel);
    if (to === undefined) continue;
    pairs.set(from, to);
    taken.add(to);
  }
  return pairs;
}

function describeModel(entry: ModelTable): { [key: string]: JsonValue } {
  return {
    provider: entry.provider,
    upstreamModel: entry.upstreamModel,
    maxOutputTokens: entry.maxOutputTokens,
    reasoning: entry.reasoning,
    fallback: [...entry.fallback],
    deprecated: entry.deprecated ? { ...entry.deprecated } : null,
  };
}

function compareModel(model: string, before: ModelTable, after: ModelTable, lineOf: LineOf): Change[] {
  const changes: Change[] = [];
  const at = (key?: string) => lineOf(key ? ['models', model, key] : ['models', model]);
  const common = { model, provider: after.provider };
  if (before.upstreamModel !== after.upstreamModel) {
    changes.push({ severity: 'behaviour', kind: 'model_repointed', ...common, before: before.upstreamModel, after: after.upstreamModel, line: at('upstream_model') });
  }
  const limitBefore = before.maxOutputTokens;
  const limitAfter = after.maxOutputTokens;
  if (limitBefore !== limitAfter) {
    // Only a known limit made smaller breaks a caller; declaring or dropping one changes what is documented.
    const lowered = limitBefore !== null && limitAfter !== null && limitAfter < limitBefore;
    changes.push({
      severity: lowered ? 'breaking' : 'safe',
      kind: lowered ? 'output_limit_lowered' : 'capability_changed',
      ...common,
      before: lowered ? limitBefore : { maxOutputTokens: limitBefore },
      after: lowered ? limitAfter : { maxOutputTokens: limitAfter },
      line: at('max_output_tokens'),
    });
  }
  if (before.reasoning !== after.reasoning) {
    const removed = after.reasoning === 'none';
    // none -> a mode: callers may now ask for reasoning. budget <-> adaptive: reasoning_effort is mapped anew.
    // A gemini model's range or levels go with its mode: shown in this item, not again.
    const severity = removed ? 'breaking' : before.reasoning === 'none' ? 'safe' : 'behaviour';
    changes.push({
      severity,
      kind: removed ? 'reasoning_removed' : 'capability_changed',
      ...common,
      before: removed ? before.reasoning : thinkingOf(before),
      after: removed ? after.reasoning : thinkingOf(after),
      line: at('reasoning'),
    });
  } else {
    changes.push(...compareThinking(before, after, common, at));
  }
  if (before.kind !== after.kind) {
    // Its callers call the other endpoint: every one of their requests is now refused.
    changes.push({ severity: 'breaking', kind: 'kind_changed', ...common, before: before.kind ?? 'chat', after: after.kind ?? 'chat', line: at('kind') });
  }
  if (before.api !== after.api) {
    // Native: the caller's Responses request reaches the provider's /responses; translated: it goes as a chat request.
    changes.push({ severity: 'behaviour', kind: 'api_changed', ...common, before: before.api ?? 'chat', after: after.api ?? 'chat', line: at('api') });
  }
  if (!sameValue(before.fallback, after.fallback)) {
    changes.push({ severity: 'behaviour', kind: 'fallback_changed', ...common, before: [...before.fallback], after: [...after.fallback], line: at('fallback') });
  }
  if (!sameValue(before.deprecated, after.deprecated)) {
    const newly = before.deprecated === null;
    changes.push({
      severity: 'behaviour',
      kind: newly ? 'model_deprecated' : 'deprecation_changed',
      ...common,
      before: before.deprecated ? { ...before.deprecated } : null,
      after: after.deprecated ? { ...after.deprecated } : null,
      line: at('deprecated'),
    });
  }
  // Gated provider-native fields (allow_fields: the model's and its provider's): one allowed is a way to spend or
  // reach more, which a security reviewer must see; one withdrawn is refused with a 400 from then on.
  const gained = after.allowFields.filter((field) => !before.allowFields.includes(field));
  const lost = before.allowFields.filter((field) => !after.allowFields.includes(field));
  if (lost.length > 0) changes.push({ severity: 'breaking', kind: 'fields_disallowed', ...common, before: [...before.allowFields], after: [...after.allowFields], line: at('allow_fields') });
  if (gained.length > 0) changes.push({ severity: 'behaviour', kind: 'fields_allowed', ...common, before: [...before.allowFields], after: [...after.allowFields], line: at('allow_fields') });
  // A price changes what every answer costs and how fast budgets run out.
  if (!sameValue(before.price, after.price)) {
    changes.push({ severity: 'behaviour', kind: 'price_changed', ...common, before: before.price ? { ...before.price } : null, after: after.price ? { ...after.price } : null, line: at('price') });
  }
  return changes;
}
