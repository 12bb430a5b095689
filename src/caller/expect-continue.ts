import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/** Requests that asked `Expect: 100-continue` and have not been invited to send their body yet. */
const awaitingInvitation = new WeakSet<IncomingMessage>();

/**
 * A handler for http.Server's 'checkContinue' event. Node would answer `100 Continue` at once; instead the
 * request is handled like any other, and invited only when its body is about to be read, so what can be
 * refused from the headers alone (401, 404, 413, 415, 503) is refused before the caller sends the body.
 */
export function deferContinue(handler: RequestListener): RequestListener {
  return (req, res) => {
    awaitingInvitation.add(req);
    handler(req, res);
  };
}

/** Sends `100 Continue` if the caller is waiting for it; the body reader calls this before reading. */
export function inviteBody(req: IncomingMessage, res: ServerResponse): void {
  if (awaitingInvitation.delete(req) && !res.headersSent) res.writeContinue();
}
