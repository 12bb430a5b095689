/** What `npm run review` reports: one caller-visible effect of a routes.yaml change. */

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** breaking: a caller that works today fails; behaviour: callers keep working but get something different. */
export type Severity = 'breaking' | 'behaviour' | 'safe';

export interface Change {
  readonly severity: Severity;
  readonly kind: string;
  readonly model?: string;
  readonly provider?: string;
  readonly caller?: string;
  /** field_changed only: the compiled field, dotted (`models.openai/gpt-4o.someField`). */
  readonly field?: string;
  readonly before?: JsonValue;
  readonly after?: JsonValue;
  /** 1-based line in NEW, where the changed thing is written; absent for what NEW no longer has. */
  readonly line?: number;
  /** With --traffic: the requests over the window that this change touches (traffic.ts). */
  readonly traffic?: ItemTraffic;
}

/** The requests a change touches over the traffic window, and who sent them. */
export interface ItemTraffic {
  readonly requests: number;
  /** Requests per caller name (`key`, `anonymous` or empty for requests without a named caller), most first. */
  readonly callers: Readonly<Record<string, number>>;
  /** price_changed only: USD the window's requests of the model cost. */
  readonly spendUsd?: number;
  /** price_changed only: USD the window's traffic would have cost more (negative: less) at the new price. */
  readonly spendMovedUsd?: number;
}

/** The three sections, each in the order the classifiers found the changes (file order within a kind). */
export interface Review {
  readonly breaking: readonly Change[];
  readonly behaviour: readonly Change[];
  readonly safe: readonly Change[];
}

/** Where a path is written in NEW (routes.yaml keys, e.g. ['models', 'openai/gpt-4o']): the key's line. */
export type LineOf = (path: readonly (string | number)[]) => number;

export function sortIntoSections(changes: readonly Change[]): Review {
  return {
    breaking: changes.filter((change) => change.severity === 'breaking'),
    behaviour: changes.filter((change) => change.severity === 'behaviour'),
    safe: changes.filter((change) => change.severity === 'safe'),
  };
}

/** Order-sensitive structural equality of compiled values (tables hold only JSON). */
export function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A compiled value as plain JSON (the tables hold nothing else). */
export function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
}
