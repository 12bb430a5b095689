import { crc32 } from 'node:zlib';

/**
 * AWS event-stream messages, written from the format's description (prelude: total length, headers length,
 * CRC32 of those 8 bytes; headers: name length, name, type 7 = string with a 2-byte length; payload; CRC32 of
 * all before it), independently of the gateway's decoder. test/dialects/bedrock/event-stream-codec.test.ts checks its
 * output with the AWS SDK's own codec.
 */
export function encodeMessage(headers: Readonly<Record<string, string>>, payload: Buffer | string): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name, 'utf8');
      const valueBytes = Buffer.from(value, 'utf8');
      const header = Buffer.alloc(1 + nameBytes.length + 1 + 2 + valueBytes.length);
      header.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(header, 1);
      header.writeUInt8(7, 1 + nameBytes.length);
      header.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      valueBytes.copy(header, 4 + nameBytes.length);
      return header;
    }),
  );
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const total = 12 + headerBytes.length + body.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, 12);
  body.copy(message, 12 + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

/** A ConverseStream event as Bedrock sends it: its payload is the event's members, with the padding member `p`. */
export function eventMessage(type: string, payload: Record<string, unknown>): Buffer {
  return encodeMessage({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF'.slice(0, 1 + (type.length % 30)) }));
}

/** An exception message of the stream (`throttlingException`, …) with its message. */
export function exceptionMessage(type: string, message: string): Buffer {
  return encodeMessage({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify({ message }));
}

/** A prelude that announces `total` bytes (with a correct CRC), and nothing after it. */
export function preludeAnnouncing(total: number, headersLength = 0): Buffer {
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headersLength, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  return prelude;
}
