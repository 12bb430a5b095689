import { cacheControlOf, invalid, jsonObject, shown, unsupported, type JsonNode } from './json-node.js';

/** Anthropic fetches URL images itself; the gateway never downloads one, and sends only https ones on. */
const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
/** OpenAI's image_url.detail values: a hint, dropped for Anthropic. */
const IMAGE_DETAILS = new Set<unknown>(['auto', 'low', 'high']);

/**
 * A message's `content` as Anthropic content: a string stays the caller's string (bytes as sent) unless
 * the message carries a `cache_control`, which then goes on the one text block; parts become blocks.
 * `allowImages` is false where Anthropic takes text only (system).
 */
export function contentOf(message: JsonNode, content: JsonNode, allowImages: boolean): string {
  if (content.isString) {
    const cache = cacheControlOf(message);
    return cache.length > 0 ? `[${jsonObject([['type', '"text"'], ['text', content.raw], ...cache])}]` : content.raw;
  }
  return `[${contentBlocks(content, allowImages).join(',')}]`;
}

/** The parts of an array `content` as Anthropic blocks, in order. */
export function contentBlocks(content: JsonNode, allowImages: boolean): string[] {
  return content.items().map((part) => partBlock(part, allowImages));
}

function partBlock(part: JsonNode, allowImages: boolean): string {
  const type = part.field('type')?.value;
  if (type === 'text') return textBlock(part);
  if (type === 'image_url' && allowImages) return imageBlock(part);
  const where = allowImages ? 'here' : 'in a system or developer message';
  throw unsupported(part.path, `Content part type ${shown(type)} at '${part.path}' has no Anthropic form ${where}: send text${allowImages ? ' or image_url' : ''} parts.`);
}

/** A `text` part as a text block, keeping its `cache_control`. */
export function textBlock(part: JsonNode): string {
  const text = part.field('text');
  if (!text?.isString) throw invalid(`${part.path}.text`, `Invalid '${part.path}.text': expected a string.`);
  return jsonObject([['type', '"text"'], ['text', text.raw], ...cacheControlOf(part)]);
}

/** An `image_url` part: a data: URL becomes a base64 source, an https: URL a url source. */
function imageBlock(part: JsonNode): string {
  const image = part.field('image_url');
  const urlNode = image?.isString ? image : image?.field('url');
  const param = image?.isString ? `${part.path}.image_url` : `${part.path}.image_url.url`;
  const url = urlNode?.value;
  if (typeof url !== 'string') throw invalid(param, `Invalid '${param}': expected a string URL.`);
  // A resolution hint Anthropic has no counterpart for: dropped (docs/dialect-anthropic.md), so a vision client that always sends it works.
  const detail = image?.isString ? undefined : image?.given('detail');
  if (detail !== undefined && !IMAGE_DETAILS.has(detail.value)) {
    throw invalid(`${part.path}.image_url.detail`, `Invalid '${part.path}.image_url.detail' ${shown(detail.value)}: expected "auto", "low" or "high".`);
  }
  let source: string;
  const data = DATA_URL.exec(url);
  if (data) {
    source = jsonObject([['type', '"base64"'], ['media_type', JSON.stringify(data[1]!)], ['data', JSON.stringify(data[2]!)]]);
  } else if (url.startsWith('data:')) {
    throw invalid(param, `Invalid '${param}': a data: URL must be base64 (data:<media type>;base64,<data>).`);
  } else if (/^https:\/\//i.test(url)) {
    source = jsonObject([['type', '"url"'], ['url', urlNode!.raw]]);
  } else {
    throw unsupported(param, `Invalid '${param}': Anthropic takes images as data: or https: URLs.`);
  }
  return jsonObject([['type', '"image"'], ['source', source], ...cacheControlOf(part)]);
}
