import pino, { type Logger } from 'pino';

/**
 * Writes an info line whose fields are already JSON (`"key":value,…`), byte for byte as `logger.info(fields, msg)`
 * writes it: level, time, the logger's bindings, the fields, the message. pino's own path loops over a fields
 * object (per key: escape the name, look up a serializer, switch on the type): for the request line that cost
 * 3.4 µs against 1.4 µs from a template (issue 25, BENCHMARKS.md). A logger that changes what it writes (a mixin,
 * a log formatter, redaction, a nested key, a message prefix, a stream hook, pino.multistream) gets the parsed
 * fields through pino instead.
 */
export type InfoLineWriter = (fields: string) => void;

// msgPrefixSym is missing from pino's type of its symbols.
const s = pino.symbols as typeof pino.symbols & { readonly msgPrefixSym: symbol };
const INFO = 30;

export function infoLineWriter(logger: Logger, msg: string, { mayWait = false } = {}): InfoLineWriter {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[s.streamSym] as { write(line: string): void; writeWaiting?: (line: string) => void; [key: symbol]: unknown };
  const stringifiers = internals[s.stringifiersSym] as object;
  const plain =
    !internals[s.mixinSym] &&
    !(internals[s.formattersSym] as { log?: unknown }).log &&
    Object.keys(stringifiers).length + Object.getOwnPropertySymbols(stringifiers).length === 0 &&
    internals[s.nestedKeySym] == null &&
    !internals[s.msgPrefixSym] &&
    !(internals[s.hooksSym] as { streamWrite?: unknown }).streamWrite &&
    stream[s.needsMetadataGsym] !== true;
  if (!plain) return (fields) => logger.info(JSON.parse(`{${fields}}`) as object, msg);
  const head = (internals[s.lsCacheSym] as Record<number, string>)[INFO]!;
  const bindings = internals[s.chindingsSym] as string;
  const tail = `,${JSON.stringify(internals[s.messageKeySym])}:${JSON.stringify(msg)}${internals[s.endSym] as string}`;
  const time = internals[s.timeSym] as () => string;
  // mayWait: lines that may wait in a batch (request lines) go to the batching output's writeWaiting (log-destination.ts).
  const write = mayWait && stream.writeWaiting ? stream.writeWaiting : (line: string) => stream.write(line);
  return (fields) => {
    if (logger.levelVal <= INFO) write(`${head}${time()}${bindings},${fields}${tail}`);
  };
}

/** A value as pino writes it: strings and objects as JSON, a number that is not finite as null. */
export const json = (value: string | object | null): string => JSON.stringify(value);
export const num = (value: number | null): string => (value === null || !Number.isFinite(value) ? 'null' : String(value));
