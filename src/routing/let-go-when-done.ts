import type { Duplex } from 'node:stream';

/**
 * got's own fields that keep a finished call's objects reachable: its options (the provider request's body
 * among them), the ClientRequest, the response, and two closures over the ClientRequest.
 */
const GRAPH_FIELDS = ['options', 'response', '_request', '_nativeResponse', '_requestOptions'] as const;
const CLOSURE_FIELDS = ['_unproxyEvents', '_cancelTimeouts'] as const;
const noop = () => {};

/**
 * Lets a provider call's objects go as soon as it is over, instead of at the next full garbage collection.
 *
 * Why: V8's young-generation collections keep a closure that was stored on an object alive until the next full
 * collection, and with it everything the closure reaches. got's request is a Duplex, whose Writable state stores
 * such a closure over the request on Node 24 (nodejs/node#62087); on Node 22 closures stored elsewhere on the
 * call's path reach it. So each finished request moved everything it references (got's options, the
 * ClientRequest, the response, our listeners) into the old generation: ~12 KB of got's objects per request, the
 * scavenges several times longer and a full collection every few of them (BENCHMARKS.md, issue 25, fourth session).
 *
 * How: a request read to its end is destroyed (got's own clean-up runs: its timers and listeners; the socket is
 * already back in the pool, so it stays there), and once it has closed, by whatever path, the fields that hold
 * its graph are cut. Nothing calls into a closed got request again: a later destroy() is a no-op, and every
 * abort checks `destroyed` first. A listener keeps any late 'error' from being unhandled.
 */
export function letGoWhenDone(request: Duplex): void {
  // Plain listeners: got emits each once, and once() would add a wrapper closure per call, kept while a stream is open.
  request.on('end', () => setImmediate(() => request.destroy()));
  request.on('close', () =>
    // After every other 'close' listener (the body reader's among them) has run.
    setImmediate(() => {
      const fields = request as unknown as Record<string, unknown>;
      for (const name of GRAPH_FIELDS) fields[name] = undefined;
      for (const name of CLOSURE_FIELDS) fields[name] = noop;
      request.removeAllListeners();
      request.on('error', noop);
    }),
  );
}
