import type { ErrorBody } from '../../generated/types/error-envelope.js';
import type { StreamFrames } from '../../routing/answer-writer.js';
import { answerChoice, chatEventReader } from '../chat-answer.js';
import { isObject } from '../inbound-fields.js';
import { StreamBudget, type StreamHoldings } from '../../dialects/stream-budget.js';
import { failedError, functionCallItem, itemId, messageItem, outputText, reasoningItem, responseObject, statusOf, usageOf, type ResponseHead } from './response-object.js';

/**
 * What a held character of the answer costs at its peak: two bytes (text beyond Latin-1) times the copies made
 * when its item closes: the text held, its `*.done` event, content_part.done, output_item.done, the terminal
 * event's output, and these events as the one string written to the caller.
 */
const ANSWER_PEAK_BYTES_PER_CHAR = 20;

/** One output item being streamed. */
type OpenItem =
  | { kind: 'reasoning'; index: number; id: string; text: string; blocks: string[] }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'call'; index: number; id: string; callId: string; name: string; args: string };

/**
 * Chat chunks as the Responses' event stream: created, in_progress, each output item (added, its deltas,
 * done), then one terminal event (completed, incomplete or failed) with the usage. Every event has its type
 * and a strictly increasing sequence_number; there is no [DONE].
 */
export function responsesStream(head: ResponseHead, maxAnswerChars: number, holdings?: StreamHoldings): StreamFrames {
  /** The terminal event repeats the whole output, so it is held, and copied when it closes: bounded with its copies. */
  const held = new StreamBudget(maxAnswerChars, holdings, ANSWER_PEAK_BYTES_PER_CHAR, 'sent an answer whose held text');
  const done: Record<string, unknown>[] = [];
  let sequence = 0;
  let opened = false;
  let finished = false;
  let reasoning: Extract<OpenItem, { kind: 'reasoning' }> | undefined;
  let message: Extract<OpenItem, { kind: 'message' }> | undefined;
  const calls = new Map<number, Extract<OpenItem, { kind: 'call' }>>();
  let finishReason: string | null = null;
  let usage: Record<string, unknown> | null = null;

  const event = (type: string, fields: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const nextIndex = () => done.length + (reasoning ? 1 : 0) + (message ? 1 : 0) + calls.size;
  const open = (): string => {
    if (opened) return '';
    opened = true;
    const response = responseObject(head, 'in_progress', []);
    return event('response.created', { response }) + event('response.in_progress', { response });
  };

  const closeReasoning = (): string => {
    if (!reasoning) return '';
    const item = reasoningItem(reasoning.id, reasoning.text, reasoning.blocks, head.includeEncrypted);
    let frames = '';
    if (reasoning.text !== '') {
      const at = { item_id: reasoning.id, output_index: reasoning.index, summary_index: 0 };
      frames += event('response.reasoning_summary_text.done', { ...at, text: reasoning.text });
      frames += event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: reasoning.text } });
    }
    frames += event('response.output_item.done', { output_index: reasoning.index, item });
    done.push(item);
    reasoning = undefined;
    return frames;
  };
  const closeMessage = (): string => {
    if (!message) return '';
    const at = { item_id: message.id, output_index: message.index, content_index: 0 };
    const item = messageItem(message.id, message.text, 'completed');
    const frames =
      event('response.output_text.done', { ...at, text: message.text, logprobs: [] }) +
      event('response.content_part.done', { ...at, part: outputText(message.text) }) +
      event('response.output_item.done', { output_index: message.index, item });
    done.push(item);
    message = undefined;
    return frames;
  };
  const closeCalls = (): string => {
    let frames = '';
    for (const call of calls.values()) {
      const item = functionCallItem(call.id, call.callId, call.name, call.args, 'completed');
      frames += event('response.function_call_arguments.done', { item_id: call.id, output_index: call.index, name: call.name, arguments: call.args });
      frames += event('response.output_item.done', { output_index: call.index, item });
      done.push(item);
    }
    calls.clear();
    return frames;
  };

  /** A reasoning item opens with its block when the block comes first (a redacted one): then `added` carries it too, as OpenAI's does. */
  const openReasoning = (block?: string): string => {
    const frames = closeReasoning() + closeMessage();
    reasoning = { kind: 'reasoning', index: nextIndex(), id: itemId('rs'), text: '', blocks: block === undefined ? [] : [block] };
    return frames + event('response.output_item.added', { output_index: reasoning.index, item: reasoningItem(reasoning.id, '', reasoning.blocks, head.includeEncrypted) });
  };
  const reasoningText = (text: string): string => {
    let frames = '';
    // A block ends its thinking: text after it is the next block's, in an item of its own.
    if (!reasoning || reasoning.blocks.length > 0) frames += openReasoning();
    const open = reasoning!;
    const at = { item_id: open.id, output_index: open.index, summary_index: 0 };
    if (open.text === '') frames += event('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
    held.hold(text.length);
    open.text += text;
    return frames + event('response.reasoning_summary_text.delta', { ...at, delta: text });
  };
  const contentText = (text: string): string => {
    let frames = closeReasoning();
    if (!message) {
      message = { kind: 'message', index: nextIndex(), id: itemId('msg'), text: '' };
      frames += event('response.output_item.added', { output_index: message.index, item: messageItem(message.id, '', 'in_progress') });
      frames += event('response.content_part.added', { item_id: message.id, output_index: message.index, content_index: 0, part: outputText('') });
    }
    held.hold(text.length);
    message.text += text;
    return frames + event('response.output_text.delta', { item_id: message.id, output_index: message.index, content_index: 0, delta: text, logprobs: [] });
  };
  const toolCall = (delta: Record<string, unknown>): string => {
    const chatIndex = typeof delta['index'] === 'number' ? delta['index'] : 0;
    const fn = isObject(delta['function']) ? delta['function'] : {};
    let frames = '';
    let call = calls.get(chatIndex);
    if (!call) {
      frames += closeReasoning() + closeMessage();
      const callId = typeof delta['id'] === 'string' ? delta['id'] : itemId('call');
      const name = typeof fn['name'] === 'string' ? fn['name'] : '';
      held.hold(callId.length + name.length);
      call = { kind: 'call', index: nextIndex(), id: itemId('fc'), callId, name, args: '' };
      calls.set(chatIndex, call);
      frames += event('response.output_item.added', { output_index: call.index, item: functionCallItem(call.id, call.callId, call.name, '', 'in_progress') });
    }
    const fragment = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
    if (fragment === '') return frames;
    held.hold(fragment.length);
    call.args += fragment;
    return frames + event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.index, delta: fragment });
  };

  // What is held past its chunk is charged to `held` as it is held (usage and finish reason as their small readings); a
  // limit it passes is thrown, not answered here: the engine ends the stream with response.failed naming the provider.
  const chunk = (data: Record<string, unknown>): string => {
    if (data['usage'] !== undefined && data['usage'] !== null) usage = usageOf(data['usage']);
    const choice = answerChoice(data);
    if (!choice) return '';
    const delta = isObject(choice['delta']) ? choice['delta'] : {};
    let frames = '';
    if (typeof delta['reasoning_content'] === 'string' && delta['reasoning_content'] !== '') frames += reasoningText(delta['reasoning_content']);
    if (Array.isArray(delta['thinking_blocks'])) {
      for (const block of delta['thinking_blocks']) {
        // The block closes the item its thinking text opened; a block without one (redacted) opens its own.
        const text = JSON.stringify(block);
        held.hold(text.length);
        if (reasoning && reasoning.blocks.length === 0) reasoning.blocks.push(text);
        else frames += openReasoning(text);
      }
    }
    if (typeof delta['content'] === 'string' && delta['content'] !== '') frames += contentText(delta['content']);
    if (Array.isArray(delta['tool_calls'])) for (const call of delta['tool_calls']) if (isObject(call)) frames += toolCall(call);
    const reason = choice['finish_reason'];
    // Only what statusOf tells apart is kept: a provider's reason may be any size.
    if (reason !== null && reason !== undefined) finishReason = reason === 'length' || reason === 'content_filter' ? reason : 'stop';
    return frames;
  };

  const terminal = (): string => {
    finished = true;
    const frames = closeReasoning() + closeMessage() + closeCalls();
    const { status, incomplete_details } = statusOf(finishReason);
    const response = responseObject(head, status, done, { incomplete_details, usage });
    return frames + event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  };

  const failed = (body: ErrorBody): string => {
    if (finished) return '';
    finished = true;
    // Events already numbered by a read that failed partway go first, so the numbers run on.
    const frames = read.unsent() + open() + closeReasoning() + closeMessage() + closeCalls();
    return frames + event('response.failed', { response: responseObject(head, 'failed', done, { error: failedError(body), usage }) });
  };

  const read = chatEventReader({ chunk, done: terminal, error: failed, finished: () => finished });
  return {
    frames(text) {
      if (finished) return '';
      // response.created and in_progress go through the reader, so a read that throws still leaves them to failed.
      return read(text, open());
    },
    error: failed,
    finished: () => finished,
  };
}
