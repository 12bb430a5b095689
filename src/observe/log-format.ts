/** How log lines are written: pino's JSON (for collectors), or one readable line each (for a person at a terminal). */
export type LogFormat = 'json' | 'pretty';

/** LOG_FORMAT=auto (the default) is pretty only for a person at a terminal: pipes and collectors get JSON. */
export function resolveLogFormat(setting: 'auto' | LogFormat, stdoutIsTerminal: boolean): LogFormat {
  return setting === 'auto' ? (stdoutIsTerminal ? 'pretty' : 'json') : setting;
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Shown in the line's head, or not at all. */
const HEAD_FIELDS = new Set(['level', 'time', 'pid', 'msg']);

/** A pino destination that rewrites each JSON line as `time LEVEL msg key=value …` on `out`. */
export function prettyDestination(out: { write(text: string): unknown }): { write(line: string): void } {
  return { write: (line) => void out.write(prettyLine(line)) };
}

/**
 * One JSON log line as text: the clock time (UTC), the level, the message, then every non-null field. Values
 * that are not plain printable ASCII are JSON-quoted with non-ASCII escaped, so no logged value (a path a
 * caller chose, say) can move the cursor or recolour the terminal.
 */
export function prettyLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const time = typeof record['time'] === 'string' ? record['time'].slice(11, 23) : '';
  const level = (LEVELS[Number(record['level'])] ?? String(record['level'])).padEnd(5);
  const msg = String(record['msg'] ?? '');
  const fields = Object.entries(record)
    .filter(([key, value]) => !HEAD_FIELDS.has(key) && value !== null && value !== undefined)
    .map(([key, value]) => `${word(key)}=${typeof value === 'string' ? word(value) : quoted(JSON.stringify(value))}`);
  return `${[time, level, /^[\x20-\x7e]*$/.test(msg) ? msg : quoted(JSON.stringify(msg)), ...fields].filter((part) => part !== '').join(' ')}\n`;
}

/** As is when it reads as one word, else quoted. */
function word(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) && !text.includes('"') ? text : quoted(JSON.stringify(text));
}

/** JSON text with everything outside printable ASCII escaped (JSON.stringify leaves non-ASCII as is). */
function quoted(json: string): string {
  return json.replace(/[^\x20-\x7e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
