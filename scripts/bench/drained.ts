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
