import { isObject } from '../json-values.js';

/** One functionCall part as an OpenAI tool call, with the thought signature that must go back with it. */
export interface ToolCallOut {
  readonly id: string;
  readonly name: string;
  /** The args object as JSON text. */
  readonly arguments: string;
  readonly signature: string | undefined;
}

/** What the parts of one response (or one streamed record) hold, in OpenAI's terms. */
export interface PartsOut {
  text: string;
  reasoning: string;
  calls: ToolCallOut[];
  /** A signature on a text or thought part: it goes on the message (`extra_content`). */
  messageSignature: string | undefined;
}

/**
 * Reads a candidate's parts. A signature on a functionCall part is that call's; one on a text or thought
 * part is the message's; one on an otherwise empty part (Gemini may put it there, before the call it
 * belongs to) waits in `pending` for the next call that has none, and is the message's if none comes.
 * Parts of other kinds (inlineData out, executableCode) are not translated.
 */
export function readParts(parts: unknown, pending: { signature: string | undefined }): PartsOut {
  const out: PartsOut = { text: '', reasoning: '', calls: [], messageSignature: undefined };
  if (!Array.isArray(parts)) return out;
  for (const part of parts) {
    if (!isObject(part)) continue;
    const signature = typeof part['thoughtSignature'] === 'string' && part['thoughtSignature'] !== '' ? part['thoughtSignature'] : undefined;
    const call = part['functionCall'];
    if (isObject(call)) {
      out.calls.push({
        id: typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : `call_${crypto.randomUUID().replaceAll('-', '')}`,
        name: typeof call['name'] === 'string' ? call['name'] : '',
        arguments: JSON.stringify(isObject(call['args']) ? call['args'] : {}),
        signature: signature ?? pending.signature,
      });
      if (!signature) pending.signature = undefined;
      continue;
    }
    const text = typeof part['text'] === 'string' ? part['text'] : '';
    if (part['thought'] === true) out.reasoning += text;
    else out.text += text;
    if (!signature) continue;
    if (text === '' && part['thought'] !== true) pending.signature = signature;
    else out.messageSignature = signature;
  }
  return out;
}

/** `extra_content` as Google's own OpenAI-compatible layer shapes it (clients send it back as is). */
export function extraContent(signature: string): string {
  return `{"google":{"thought_signature":${JSON.stringify(signature)}}}`;
}

/** The most candidates Gemini generates for one request (generationConfig.candidateCount is 1 to 8). */
export const MAX_CANDIDATES = 8;

/** One candidate of a response and the choice it is: its `index`. */
export interface IndexedCandidate {
  readonly index: number;
  readonly candidate: Record<string, unknown>;
}

/**
 * The candidates of a response (or of one streamed record) with their indexes; undefined when there are more
 * than MAX_CANDIDATES or one has an index no request can have asked for (then the answer is not usable). A candidate without an `index` is candidate 0:
 * Google's JSON leaves a field out at its default (proto3). Entries that are not objects are skipped.
 */
export function candidatesOf(response: Record<string, unknown>): IndexedCandidate[] | undefined {
  const candidates = response['candidates'];
  if (!Array.isArray(candidates)) return [];
  if (candidates.length > MAX_CANDIDATES) return undefined;
  const out: IndexedCandidate[] = [];
  for (const candidate of candidates as unknown[]) {
    if (!isObject(candidate)) continue;
    const index = candidate['index'] ?? 0;
    if (!Number.isSafeInteger(index) || (index as number) < 0 || (index as number) >= MAX_CANDIDATES) return undefined;
    out.push({ index: index as number, candidate });
  }
  return out;
}

/** The candidate's parts. */
export function partsOf(candidate: Record<string, unknown> | undefined): unknown {
  const content = candidate?.['content'];
  return isObject(content) ? content['parts'] : undefined;
}

/** `promptFeedback.blockReason`: the prompt itself was blocked (then there are no candidates). */
export function promptBlocked(response: Record<string, unknown>): boolean {
  const feedback = response['promptFeedback'];
  return isObject(feedback) && typeof feedback['blockReason'] === 'string';
}
