/** Anthropic's stop_reason as an OpenAI finish_reason. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/**
 * The finish_reason for a stop_reason: null when the provider gave none, `stop` for a reason this
 * gateway does not know yet (the answer did end; a client's enum would refuse an unknown word).
 */
export function finishReasonOf(stopReason: unknown): string | null {
  if (typeof stopReason !== 'string') return null;
  return Object.hasOwn(FINISH_REASONS, stopReason) ? FINISH_REASONS[stopReason]! : 'stop';
}
