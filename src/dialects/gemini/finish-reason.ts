/** Gemini's finishReason words that mean the answer was filtered (prompt or output, text or image). */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'LANGUAGE', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * The OpenAI finish_reason for a Gemini finishReason. Gemini says STOP on a turn that calls tools, so a
 * STOP answer that holds a function call (in any chunk of a stream) is `tool_calls`: an agent that read
 * `stop` would not run the tool. Words this gateway does not know (OTHER, MALFORMED_FUNCTION_CALL, new
 * ones) are `stop`: the answer did end, and a client's enum would refuse an unknown word.
 */
export function finishReasonOf(reason: string, sawFunctionCall: boolean): string {
  if (reason === 'STOP') return sawFunctionCall ? 'tool_calls' : 'stop';
  if (reason === 'MAX_TOKENS') return 'length';
  return FILTERED.has(reason) ? 'content_filter' : 'stop';
}
