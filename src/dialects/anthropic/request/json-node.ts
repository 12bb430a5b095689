import { scanArrayAt, scanObjectAt, type Span } from '../../../wire/json-top-level.js';
import { gatewayError, type GatewayError } from '../../../wire/gateway-error.js';
import { isObject as isRecord } from '../../json-values.js';

/**
 * One value of the caller's body: what JSON.parse read, where its bytes stand, and its path for error
 * messages (`messages[2].content[1]`). Kept values are copied from `raw`, never re-serialised, so numbers,
 * key order and escapes reach the provider exactly as sent. Children are found by scanning only this
 * value's own level, so a walk costs the depth it descends, not the depth of the document.
 */
export class JsonNode {
  private members: Map<string, JsonNode> | undefined;

  constructor(
    readonly text: string,
    readonly span: Span,
    readonly value: unknown,
    readonly path: string,
  ) {}

  /** The value's bytes as the caller sent them. */
  get raw(): string {
    return this.text.slice(this.span.start, this.span.end);
  }

  /** The member `key` (the last of duplicates, the one JSON.parse keeps); undefined when absent or not an object. */
  field(key: string): JsonNode | undefined {
    return this.entries().get(key);
  }

  /** The member `key` unless it is absent or null: OpenAI clients send null for "not set". */
  given(key: string): JsonNode | undefined {
    const node = this.field(key);
    return node === undefined || node.value === null ? undefined : node;
  }

  /** Every member once, in the order JSON.parse gives them (first position, last value). */
  entries(): ReadonlyMap<string, JsonNode> {
    if (this.members) return this.members;
    const members = new Map<string, JsonNode>();
    if (isRecord(this.value)) {
      const scan = scanObjectAt(this.text, this.span.start);
      if (!scan) throw inconsistent(this.path);
      for (let i = 0; i < scan.keys.length; i++) {
        const key = scan.keys[i]!;
        const path = this.path === '' ? key : `${this.path}.${key}`;
        members.set(key, new JsonNode(this.text, scan.values[i]!, this.value[key], path));
      }
    }
    this.members = members;
    return members;
  }

  /** The items of an array (empty when this is not one). */
  items(): JsonNode[] {
    if (!Array.isArray(this.value)) return [];
    const spans = scanArrayAt(this.text, this.span.start);
    const values = this.value as unknown[];
    if (!spans || spans.length !== values.length) throw inconsistent(this.path);
    return spans.map((span, i) => new JsonNode(this.text, span, values[i], `${this.path}[${i}]`));
  }

  get isString(): boolean {
    return typeof this.value === 'string';
  }

  get isObject(): boolean {
    return isRecord(this.value);
  }
}

/** The whole body as a node; the engine hands over a text that JSON.parse read as `body`. */
export function rootNode(text: string, body: unknown): JsonNode {
  const start = text.search(/[^ \t\n\r]/);
  const scan = isRecord(body) ? scanObjectAt(text, start) : undefined;
  if (!scan) throw inconsistent('');
  return new JsonNode(text, { start, end: scan.end }, body, '');
}


/** The text and the parsed body disagree: a bug in the caller of this module, not the caller's request. */
function inconsistent(path: string): Error {
  return new Error(`request text and parsed body disagree at "${path}"`);
}

/** A field the gateway cannot honour for this provider: refused, never silently dropped. */
export function unsupported(param: string, message: string): GatewayError {
  return gatewayError('unsupported_parameter', message, { param });
}

/** A field whose value cannot be translated. */
export function invalid(param: string, message: string): GatewayError {
  return gatewayError('invalid_request', message, { param, code: 'invalid_value' });
}

/** `{"k":v,…}` from already encoded values. */
export function jsonObject(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([key, json]) => `${JSON.stringify(key)}:${json}`).join(',')}}`;
}

/** `cache_control` of a part, kept byte for byte. */
export function cacheControlOf(node: JsonNode): [string, string][] {
  const cache = node.given('cache_control');
  return cache ? [['cache_control', cache.raw]] : [];
}

/** A caller's value for an error message: short, so a hostile one cannot flood the answer or the logs. */
export function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}

export { isRecord };
