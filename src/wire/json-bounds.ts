/** How far a request body may go before JSON.parse is allowed to build it. */
export interface JsonBounds {
  /** Nesting of arrays and objects. */
  readonly maxDepth: number;
  /** Objects, arrays, strings, numbers, true, false and null (keys are not values; an empty object or array counts two). */
  readonly maxValues: number;
}

/** Which bound a body broke, and where. */
export interface JsonBoundsViolation {
  readonly bound: 'depth' | 'values';
  /** Where the top-level key whose value broke it stands in the bytes fed, [start, end); undefined when none does. */
  readonly keySpan: { readonly start: number; readonly end: number } | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** 1 for the bytes that end a run of string content: a quote or a backslash. */
const ENDS_STRING_RUN = new Uint8Array(256);
ENDS_STRING_RUN[QUOTE] = 1;
ENDS_STRING_RUN[BACKSLASH] = 1;
/** Longest top-level key reported as `param`: real parameter names are short. */
const MAX_KEY_BYTES = 64;

/**
 * Measures the depth and value count of a JSON text as its bytes arrive, without building anything.
 * JSON.parse turns each value into a heap object (an empty `{}` costs 3 bytes of text and ~64 bytes of
 * heap), so these bounds, checked first, are what keep one body's parse within a known memory.
 *
 * It reads the structure only (strings, brackets, commas), not the literals. For a text JSON.parse accepts,
 * the depth is exact and the value count an upper bound (`{` + `[` + `,` + 1: exact but for one extra per
 * empty object or array); for one it refuses, they bound the prefix it would build before failing. Bytes
 * of multi-byte UTF-8 characters are all >= 0x80, so a byte-wise scan never mistakes them for structure.
 */
export class JsonBoundsScanner {
  #depth = 0;
  #values = 1;
  #inString = false;
  /** A backslash ended the previous chunk, inside a string: the next byte is escaped. */
  #escapePending = false;
  /** Bytes scanned in earlier chunks. */
  #offset = 0;
  #topIsObject = false;
  #awaitingKey = false;
  #inKey = false;
  #keyStart = -1;
  #keyEnd = -1;
  readonly #bounds: JsonBounds;

  constructor(bounds: JsonBounds) {
    this.#bounds = bounds;
  }

  /** Scans the next chunk; a violation is final (stop feeding). */
  feed(chunk: Uint8Array): JsonBoundsViolation | undefined {
    const { maxDepth, maxValues } = this.#bounds;
    const length = chunk.length;
    // The state lives in locals while the loop runs and is stored back after: 16 MiB of `{}` took 151 ms with fields, 54 with locals.
    let depth = this.#depth;
    let values = this.#values;
    let inString = this.#inString;
    let i = 0;
    if (this.#escapePending && length > 0) {
      this.#escapePending = false;
      i = 1;
    }
    let violation: JsonBoundsViolation['bound'] | undefined;
    while (i < length) {
      if (inString) {
        // The hot path: most of a chat body is string content, where only a quote or a backslash matters.
        while (i < length && ENDS_STRING_RUN[chunk[i]!] === 0) i++;
        if (i === length) break;
        const byte = chunk[i];
        if (byte === BACKSLASH) {
          i += 2;
          if (i > length) this.#escapePending = true;
          continue;
        }
        inString = false;
        if (this.#inKey) {
          this.#inKey = false;
          this.#keyEnd = this.#offset + i;
        }
        i++;
        continue;
      }
      const byte = chunk[i++]!;
      // Everything but quotes, commas and brackets (white space, literals, colons) is skipped with few tests.
      if (byte > CLOSE_BRACE || (byte !== QUOTE && byte !== COMMA && (byte | 0x20) !== OPEN_BRACE && (byte | 0x20) !== CLOSE_BRACE)) continue;
      if (byte === QUOTE) {
        inString = true;
        if (this.#awaitingKey && depth === 1) {
          this.#awaitingKey = false;
          this.#inKey = true;
          this.#keyStart = this.#offset + i;
          this.#keyEnd = -1;
        }
      } else if (byte === COMMA) {
        // A comma between top-level members ends the current key's value: the next count is nobody's.
        if (depth === 1 && this.#topIsObject) this.#awaitingKey = true;
        if (++values > maxValues) {
          violation = 'values';
          break;
        }
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        if (++values > maxValues) {
          violation = 'values';
          break;
        }
        if (++depth > maxDepth) {
          violation = 'depth';
          break;
        }
        if (depth === 1) {
          this.#topIsObject = byte === OPEN_BRACE;
          this.#awaitingKey = this.#topIsObject;
        }
      } else {
        depth--;
      }
    }
    this.#depth = depth;
    this.#values = values;
    this.#inString = inString;
    this.#offset += length;
    return violation && this.#violation(violation);
  }

  /** Values counted so far (an upper bound of the values JSON.parse would build). */
  get values(): number {
    return this.#values;
  }

  #violation(bound: JsonBoundsViolation['bound']): JsonBoundsViolation {
    const inMember = this.#topIsObject && !this.#awaitingKey && !this.#inKey && this.#keyEnd >= 0;
    return { bound, keySpan: inMember ? { start: this.#keyStart, end: this.#keyEnd } : undefined };
  }
}

/**
 * The top-level key at [start, end) of `bytes`, when it is short and plain enough to be named as `param`
 * (it is the caller's own text: nothing escaped, nothing unusual, echoed only when it looks like a field name).
 */
export function plainKeyAt(bytes: Uint8Array, start: number, end: number): string | undefined {
  if (start < 0 || end < start || end - start > MAX_KEY_BYTES || end > bytes.length) return undefined;
  const key = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : undefined;
}
