/**
 * The high-water mark of every socket and HTTP stream the gateway opens, to callers and to providers: how much a
 * paused stream (a caller that reads slowly) may buffer on each side before backpressure stops reading from the
 * provider. Node 22 raised the default from 16 to 64 KiB; set here, the ceiling per slow caller that docs/performance.md
 * documents does not move with the Node version. A read from a socket is up to 64 KiB whatever this is.
 */
export const SOCKET_HIGH_WATER_MARK = 16 * 1024;
