import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';

/** http.createServer's options for the classes of the requests and responses it makes. */
export interface ServerClasses {
  readonly IncomingMessage: typeof IncomingMessage;
  readonly ServerResponse: typeof ServerResponse;
}

/**
 * Request and response classes for the server of `app`, whose instances are born on the prototypes Express gives
 * them: the classes' prototypes become app.request and app.response. Express sets both prototypes on every request
 * (Object.setPrototypeOf), and V8 moves an object that has its properties already to another prototype by
 * migrating its map: about 30 k instructions per request for the two (callgrind, issue 40). To the prototype it has,
 * nothing. Express still sets them, so a request that another server made (a test's) is served as before.
 */
export function serverClassesFor(app: Express): ServerClasses {
  class GatewayRequest extends IncomingMessage {}
  class GatewayResponse extends ServerResponse {}
  takeThePlaceOf(app, 'request', GatewayRequest.prototype);
  takeThePlaceOf(app, 'response', GatewayResponse.prototype);
  // (ServerResponse is generic in its request type; node makes each response with its request.)
  return { IncomingMessage: GatewayRequest, ServerResponse: GatewayResponse as typeof ServerResponse };
}

/** `prototype` becomes app[name] with what app[name] was: its own properties (`app`) on the same chain (Express's methods, then node's). */
function takeThePlaceOf(app: Express, name: 'request' | 'response', prototype: object): void {
  const prototypes = app as unknown as Record<typeof name, object>;
  const current = prototypes[name];
  Object.setPrototypeOf(prototype, Object.getPrototypeOf(current));
  Object.defineProperties(prototype, Object.getOwnPropertyDescriptors(current));
  prototypes[name] = prototype;
}
