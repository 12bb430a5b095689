import type { Usage } from '../generated/types/usage.js';

/**
 * The usage charged when the provider reported none (docs/callers.md): a stream the caller left before the
 * provider's usage chunk, or a provider that sends no usage. One token per 4 characters, rounded up, the rule of
 * thumb OpenAI gives for English text; the log line marks such an answer `usage_estimated: true`.
 */
export const CHARS_PER_TOKEN = 4;

/** Tokens estimated for `chars` characters of text: ceil(chars / 4); 0 for none. */
export function estimateTokens(chars: number): number {
  return chars > 0 ? Math.ceil(chars / CHARS_PER_TOKEN) : 0;
}

/**
 * An answer's usage estimated from the characters of the request body sent to the provider (prompt) and of the
 * answer's text read from it (completion: see answerTextChars).
 */
export function estimatedUsage(promptChars: number, answerChars: number): Usage {
  const prompt = estimateTokens(promptChars);
  const completion = estimateTokens(answerChars);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * The usage of a stream cut before its end (the caller left, the provider broke off), which may be only what the
 * provider said at its opening (Anthropic's message_start: the prompt and a token or two): its completion raised to
 * the estimate of the answer text read. Undefined when the reported completion already covers that.
 */
export function completionAtLeastEstimated(usage: Usage, answerChars: number): Usage | undefined {
  const completion = estimateTokens(answerChars);
  const reported = usage.completion_tokens;
  if (typeof reported === 'number' && reported >= completion) return undefined;
  const raised: Usage = { ...usage, completion_tokens: completion };
  const prompt = usage.prompt_tokens;
  if (typeof prompt === 'number' && Number.isSafeInteger(prompt)) raised.total_tokens = prompt + completion;
  else delete raised.total_tokens;
  return raised;
}

/** The events of a stream scanned for text exactly, per stream: beyond these characters the share of text they held is used. */
export const EXACT_SCAN_CHARS = 16 * 1024;

/**
 * The answer text characters of a stream's events as they are read: counted exactly (answerTextChars) over its
 * first EXACT_SCAN_CHARS characters of events, and beyond them estimated as their characters times the share of
 * text the first ones held, so that a long stream pays no scan per event (BENCHMARKS.md: the CPU per event budget).
 */
export class AnswerTextCounter {
  #scanned = 0;
  #text = 0;
  #beyond = 0;

  /**
   * `counted`: answerTextChars(events), when whoever made the events counted it on the way (a dialect's lane, which
   * makes chat chunks only, never a Responses repeat). Such events are not read here: a first read of a string
   * joined from pieces copies it whole (V8 flattens it), a copy the write to the caller would make a second time.
   */
  add(events: string, counted?: number): void {
    if (counted === undefined && repeatsText(events)) return;
    if (this.#scanned < EXACT_SCAN_CHARS) {
      this.#scanned += events.length;
      this.#text += counted ?? answerTextChars(events);
    } else {
      this.#beyond += events.length;
    }
  }

  get chars(): number {
    return this.#text + (this.#beyond === 0 ? 0 : Math.round((this.#beyond * this.#text) / this.#scanned));
  }
}

const RESPONSES_EVENT = 'event: response.';
const RESPONSES_REPEAT = /^event: response\.(?:[\w.]*\.done|completed|incomplete|failed)\n/;

/**
 * A Responses event (one per step, as a native Responses stream frames it) whose text repeats what the deltas
 * before it carried, which are counted instead: a `.done` event's text, part or item, the final response's output.
 */
function repeatsText(events: string): boolean {
  return events.startsWith(RESPONSES_EVENT) && RESPONSES_REPEAT.test(events);
}

/**
 * A JSON string value of a field that carries an answer's text, in the events or the answer the gateway relays:
 * chat chunks and completions (content, reasoning_content, reasoning, refusal, tool-call arguments), Anthropic
 * Messages deltas (text, thinking, partial_json) and Responses deltas (delta). The key is found looking behind
 * from its `":`, not from its opening quote: a key's opening quote is the most common character of an event, and
 * trying the nine keys at each cost a quarter more (issue 40). Where the key starts is the same either way.
 */
const TEXT_KEYS = 'content|reasoning_content|reasoning|refusal|arguments|text|thinking|partial_json|delta';
const TEXT_FIELD = new RegExp(`(?<="(?:${TEXT_KEYS}))":\\s*"`, 'g');
/** A text field from its key's opening quote to its value's: what the count finds (a dialect that counts on its way searches for it too). */
export const TEXT_FIELD_SOURCE = `"(?:${TEXT_KEYS})":\\s*"`;
/**
 * The same found from the key's opening quote: used where a search resumes right after a value's closing quote
 * and a letter follows it. Only there could the look behind take that closing quote for a key's opening one (not
 * JSON: `"text":"a"content":"b"`), which a search from the opening quote, as the count always read, never does.
 */
const TEXT_FIELD_FROM_QUOTE = new RegExp(TEXT_FIELD_SOURCE, 'g');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWERCASE_A = 0x61;
const LOWERCASE_Z = 0x7a;

/**
 * Characters of answer text in `json` (one or more events, or a whole answer): the lengths of the string values
 * of TEXT_FIELD, as written (an escape counts its characters). The JSON around them (ids, keys, events) is not
 * text the provider bills, so it is not counted.
 */
export function answerTextChars(json: string): number {
  let chars = 0;
  for (let from = 0; ; ) {
    const after = from === 0 ? 0 : json.charCodeAt(from);
    const field = after >= LOWERCASE_A && after <= LOWERCASE_Z ? TEXT_FIELD_FROM_QUOTE : TEXT_FIELD;
    field.lastIndex = from;
    // test, not exec: only where the match ends is needed, and test makes no match array per field.
    if (!field.test(json)) return chars;
    const start = field.lastIndex;
    let at = start;
    for (; at < json.length; at++) {
      const code = json.charCodeAt(at);
      if (code === BACKSLASH) at++;
      else if (code === QUOTE) break;
    }
    chars += Math.min(at, json.length) - start;
    from = at + 1;
  }
}
