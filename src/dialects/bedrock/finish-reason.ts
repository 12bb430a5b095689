const REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/** The OpenAI finish_reason for a Converse stopReason; words this gateway does not know are `stop` (the answer did end, and a client's enum would refuse an unknown word). */
export function finishReasonOf(reason: unknown): string {
  return typeof reason === 'string' && Object.hasOwn(REASONS, reason) ? REASONS[reason]! : 'stop';
}
