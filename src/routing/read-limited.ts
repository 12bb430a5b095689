import type { Readable } from 'node:stream';

/**
 * Reads a stream to its end, or up to `maxBytes` and reports that it stopped there.
 * It pauses rather than destroys on overflow: for a request, the socket must live on to carry the 413.
 * It always settles: a stream destroyed without an error (no 'end', no 'error', only 'close') rejects.
 */
export function readLimited(stream: Readable, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    const finish = (truncated: boolean) => {
      stop();
      resolve({ bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), truncated });
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        stream.pause();
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => finish(false);
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // 'error' comes before 'close' when there is one; a close alone means the stream was cut off.
    const onClose = () => onError(Object.assign(new Error('the stream closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
