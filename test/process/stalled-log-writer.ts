// Child process for test/process/log-destination.test.ts: writes LINES request lines of about 1 KiB through the gateway's
// batched destination to its stdout (a pipe the parent does not read yet), then reports over IPC how many were
// dropped, and exits once the parent has read everything.
import { pino } from 'pino';
import { batchedLogOutput } from '../../src/observe/log-destination.js';

const LINES = Number(process.env['LINES'] ?? '2000');
const output = batchedLogOutput(1, Number(process.env['MAX_BYTES'] ?? String(256 * 1024)));
const logger = pino({ base: null }, output.stream);
const filler = 'x'.repeat(1000);
for (let i = 0; i < LINES; i++) logger.info({ i, filler }, 'request'); // request lines: the ones that wait in the batch
process.send!({ dropped: output.dropped(), heapUsed: process.memoryUsage().heapUsed });
process.on('message', () => process.exit(0));
