import type { OutgoingCall } from './dialect.js';
import { gatewayError } from '../wire/gateway-error.js';

/**
 * A caller asking for more output than routes.yaml says the model can write (max_output_tokens) is refused
 * with a 400 naming the field, rather than forwarded for the provider to refuse or to cut short.
 */
export function refuseOverOutputLimit({ body, maxOutputTokens }: Pick<OutgoingCall, 'body' | 'maxOutputTokens'>): void {
  if (maxOutputTokens === null) return;
  for (const param of ['max_completion_tokens', 'max_tokens'] as const) {
    const value: unknown = (body as Record<string, unknown>)[param];
    if (typeof value === 'number' && value > maxOutputTokens) {
      throw gatewayError('invalid_request', `'${param}' ${value} is more than this model can write (${maxOutputTokens}, its max_output_tokens): send at most that, or leave it out.`, {
        param,
        code: 'invalid_value',
      });
    }
  }
}
