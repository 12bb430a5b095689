import { request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * got's options for caching (cacheable-request's); got hands them to every request function, and http.request
 * has no use for them.
 */
const CACHE_ONLY = new Set(['shared', 'cacheHeuristic', 'immutableMinTimeToLive', 'ignoreCargoCult']);

/**
 * got's `request` function for every provider call: node's own http(s).request, given only the options got set,
 * and the URL as the four parts node sends it by (protocol, hostname, port, path).
 *
 * Why: node's Agent copies the options it gets into a null-prototype object (a dictionary), and the listeners it
 * puts on the socket (free, close, timeout, agentRemove) keep that object for the socket's whole life: every
 * provider connection, an open stream's and a pooled one's. got names ~45 options, most left undefined (its TLS
 * and cache ones): ~3 KB at 48 keys; with the ~20 keys got set, half that (measured: 1.5 KiB less heap per open
 * stream). Given a URL, node adds href, search, pathname and hash, which only the URL's parts it already has
 * repeat: without them the dictionary is about half as large, 832 bytes not 1,600 (a heap snapshot; issue 40, line 5). An
 * undefined option and an absent one mean the same to node: nothing changes on the wire.
 */
export function nativeRequest(url: URL, options: RequestOptions): ClientRequest {
  const given: Record<string, unknown> = {
    protocol: url.protocol,
    // As node's urlToHttpOptions does: an IPv6 literal without its brackets.
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    path: `${url.pathname}${url.search}`,
  };
  if (url.port !== '') given['port'] = Number(url.port);
  if (url.username || url.password) given['auth'] = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  for (const key in options) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && !CACHE_ONLY.has(key)) given[key] = value;
  }
  return (url.protocol === 'https:' ? httpsRequest : httpRequest)(given);
}
