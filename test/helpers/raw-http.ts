import { connect } from 'node:net';

export interface RawExchange {
  /** Everything the server sent, as text. */
  readonly received: string;
  /** Status codes of every response head received, in order (1xx included). */
  readonly statuses: number[];
}

/**
 * Sends `head` (request line and headers, ending in a blank line) on a fresh socket. When the server answers
 * `100 Continue` and `body` is given, sends the body then. Resolves once a final response is complete or the
 * socket closes. For what fetch cannot show: a `100 Continue`, or its absence.
 */
export function rawExchange(origin: string, head: string, body?: string | Buffer): Promise<RawExchange> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let bodySent = false;
    const statuses = () => [...received.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((match) => Number(match[1]));
    const finish = () => {
      socket.destroy();
      resolve({ received, statuses: statuses() });
    };
    socket.on('error', (error) => (received === '' ? reject(error) : finish()));
    socket.on('close', finish);
    socket.on('data', (piece: Buffer) => {
      received += piece.toString('latin1');
      if (!bodySent && body !== undefined && /^HTTP\/1\.1 100 /m.test(received)) {
        bodySent = true;
        socket.write(body);
      }
      // A final response with Content-Length is complete once that many bytes follow its head.
      const final = /HTTP\/1\.1 [2-5]\d\d [^\r]*\r\n([\s\S]*?)\r\n\r\n/.exec(received);
      const length = final && /^content-length: *(\d+)/im.exec(final[1]!);
      if (final && length && received.length - (final.index + final[0].length) >= Number(length[1])) finish();
    });
    socket.write(head);
  });
}
