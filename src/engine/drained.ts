import type { Writable } from 'node:stream';

/** Resolves true when `stream` has taken its buffered data, false when it closed instead. */
export function drained(stream: Writable): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = () => {
      stream.off('close', onClose);
      resolve(true);
    };
    const onClose = () => {
      stream.off('drain', onDrain);
      resolve(false);
    };
    stream.once('drain', onDrain).once('close', onClose);
  });
}

/** Writes `chunk` and resolves true once it has been handed to the socket, false when the stream closed first. */
export function flushed(stream: Writable, chunk: string): Promise<boolean> {
  return new Promise((resolve) => {
    const onClose = () => resolve(false);
    stream.once('close', onClose);
    stream.write(chunk, (error) => {
      stream.off('close', onClose);
      resolve(!error);
    });
  });
}
