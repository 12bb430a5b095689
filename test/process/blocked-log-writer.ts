// Child process for test/process/log-destination.test.ts: writes one request line, then the line LINE_LEVEL/LINE_MSG names,
// through the gateway's batched destination to its stdout (a pipe), then blocks its event loop for good, so no
// timer (the periodic flush) can write anything after: what reaches the pipe was written when it was logged.
import { pino } from 'pino';
import { batchedLogOutput } from '../../src/observe/log-destination.js';

const logger = pino({ base: null }, batchedLogOutput(1).stream);
logger.info({ status: 200 }, 'request');
const level = (process.env['LINE_LEVEL'] ?? 'warn') as 'info' | 'warn' | 'error';
logger[level]({ state: 'down' }, process.env['LINE_MSG'] ?? 'limit store down');
// The parent kills this process; the wait is only the failure bound's backstop.
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000);
