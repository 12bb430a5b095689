import { GatewayError } from './gateway-error.js';

/** Renames below a mapped path, relative to it: `.function.arguments` → `.arguments`. The longest that fits wins. */
export type InnerRenames = Readonly<Record<string, string>>;

/** A path in the chat form a translation made, and the caller's own path it came from. */
type Origin = string | { readonly caller: string; readonly inner: InnerRenames };

/**
 * Where each part of a translated request (the internal chat form built from a /v1/responses or /v1/messages
 * body) came from in the caller's request, so a 400 about the chat form names the field the caller sent
 * (`messages[1].tool_calls[0].function.arguments` is the caller's `input[1].arguments`). The translation records
 * a path for each node it moves or renames; a deeper path follows its nearest recorded ancestor.
 */
export class CallerPaths {
  readonly #origins = new Map<string, Origin>();

  /** `chat` came from the caller's `caller`; paths under it are renamed by `inner`, else kept as they are. */
  set(chat: string, caller: string, inner?: InnerRenames): void {
    this.#origins.set(chat, inner ? { caller, inner } : caller);
  }

  /** The caller's name for a path of the chat form; a path no translation step moved is its own name. */
  callerPath(chat: string): string {
    for (let end = chat.length; end > 0; end = lastBoundary(chat, end)) {
      const origin = this.#origins.get(chat.slice(0, end));
      if (origin === undefined) continue;
      const rest = chat.slice(end);
      return typeof origin === 'string' ? origin + rest : origin.caller + renamedInner(rest, origin.inner);
    }
    return chat;
  }

  /** The error with its `param` and the paths its message quotes ('messages[0].content') named as the caller's. */
  named(error: unknown): unknown {
    // A provider's error carries no param: what it said is passed on as it said it.
    if (!(error instanceof GatewayError) || typeof error.body.param !== 'string') return error;
    const param = this.callerPath(error.body.param);
    const message = error.body.message.replace(QUOTED_PATH, (_quoted, path: string) => `'${this.callerPath(path)}'`);
    return new GatewayError(error.status, error.retry, { ...error.body, param, message }, error.headers);
  }
}

/** A quoted field path in a message: 'max_completion_tokens', 'messages[1].tool_calls[0].function.arguments'. */
const QUOTED_PATH = /'([A-Za-z_][\w-]*(?:\[\d+\]|\.[A-Za-z_][\w-]*)*)'/g;

/** The end of the parent path: the last `.` or `[` before `end`, or 0. */
function lastBoundary(path: string, end: number): number {
  return Math.max(path.lastIndexOf('.', end - 1), path.lastIndexOf('[', end - 1), 0);
}

function renamedInner(rest: string, inner: InnerRenames): string {
  let best: string | undefined;
  for (const key of Object.keys(inner)) {
    const fits = rest === key || (rest.startsWith(key) && (rest[key.length] === '.' || rest[key.length] === '['));
    if (fits && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? rest : inner[best]! + rest.slice(best.length);
}
