import { invalidField, isObject } from '../inbound-fields.js';

/** Marks encrypted_content this gateway wrote: what follows is a provider's thinking block, base64url-encoded. */
const PREFIX = 'gw1.';

/** A thinking block (its raw JSON text, signature included) as a reasoning item's encrypted_content. */
export function encryptedContentOf(thinkingBlock: string): string {
  return PREFIX + Buffer.from(thinkingBlock, 'utf8').toString('base64url');
}

/**
 * Reasoning items of the input, replayed on the assistant message that follows them as `thinking_blocks`
 * (the internal chat form's replay field, which a dialect that can carry them sends back). Items without
 * encrypted_content, or with one another service wrote, have nothing a provider would take: dropped.
 */
export function readReasoningReplay() {
  let pending: unknown[] = [];
  return {
    take(item: Record<string, unknown>, path: string): void {
      const encrypted = item['encrypted_content'];
      if (encrypted === undefined || encrypted === null) return;
      if (typeof encrypted !== 'string') throw invalidField(`${path}.encrypted_content`, `Invalid '${path}.encrypted_content': expected a string.`);
      if (!encrypted.startsWith(PREFIX)) return;
      let block: unknown;
      try {
        block = JSON.parse(Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'));
      } catch {
        block = undefined;
      }
      if (!isObject(block) || (block['type'] !== 'thinking' && block['type'] !== 'redacted_thinking')) {
        throw invalidField(`${path}.encrypted_content`, `Invalid '${path}.encrypted_content': it is not reasoning this gateway gave; send it back unchanged.`);
      }
      pending.push(block);
    },
    attach(assistant: Record<string, unknown>): void {
      if (pending.length === 0) return;
      assistant['thinking_blocks'] = pending;
      pending = [];
    },
  };
}
