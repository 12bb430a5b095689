// The load side of `npm run bench:streams`, in its own process (forked with tsx by stream-load-client.ts, IPC;
// node: built-ins and stream-protocol.ts only): opens its share of the streams at a steady rate, reads every one as fast
// as it arrives, and, while the orchestrator says a window is open, records for each content chunk the gap it saw
// since the stream's previous chunk minus the gap the provider made (both stamps on CLOCK_MONOTONIC; the
// provider writes its stamp as the chunk's text). It keeps histograms, not samples, so it stays light. Each load
// process connects from its own loopback address (127.0.0.2, 127.0.0.3, …), so ephemeral ports never run short.
import { Agent, request } from 'node:http';
import type { StreamLoadCommand, StreamLoadReply } from './stream-protocol.js';
import { HISTOGRAM_BUCKETS, histogramBucket } from './stream-protocol.js';

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const STAMP = /"content":"(\d+)"/g;
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

let measuring = false;
let windowEvents = 0;
const addedGap = new Uint32Array(HISTOGRAM_BUCKETS);
const latency = new Uint32Array(HISTOGRAM_BUCKETS);
const errors = new Map<string, number>();
let settled = 0;
let completed = 0;
let total = 0;
let whenAllSettled: (() => void) | undefined;

const fail = (kind: string) => errors.set(kind, (errors.get(kind) ?? 0) + 1);
const reply = (message: StreamLoadReply) => process.send!(message);

function settle(kind: string | null): void {
  if (kind) fail(kind);
  else completed++;
  settled++;
  if (settled === total) whenAllSettled?.();
}

function openStream(url: string, body: string, headers: Readonly<Record<string, string>>, localAddress: string, expectedEvents: number, onOpen: () => void): void {
  let lastStamp = -1;
  let lastSeen = -1;
  let events = 0;
  let carry = '';
  let done = false;
  let over = false;
  const end = (kind: string | null) => {
    if (over) return;
    over = true;
    settle(kind);
  };
  const req = request(url, { method: 'POST', agent, localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
    onOpen();
    if (res.statusCode !== 200) {
      res.resume();
      end(`HTTP ${res.statusCode}`);
      return;
    }
    res.setEncoding('latin1');
    res.on('data', (piece: string) => {
      const seen = nowMicros();
      const text = carry + piece;
      const cut = text.lastIndexOf('\n\n');
      if (cut === -1) {
        carry = text;
        return;
      }
      carry = text.slice(cut + 2);
      for (const match of text.slice(0, cut).matchAll(STAMP)) {
        const stamp = Number(match[1]);
        events++;
        if (measuring) {
          windowEvents++;
          latency[histogramBucket(seen - stamp)]!++;
          if (lastStamp >= 0) addedGap[histogramBucket(seen - lastSeen - (stamp - lastStamp))]!++;
        }
        lastStamp = stamp;
        lastSeen = seen;
      }
      if (text.includes('data: [DONE]', Math.max(0, cut - 20))) done = true;
    });
    res.on('end', () => end(!done ? 'ended without [DONE]' : events !== expectedEvents ? `${events} of ${expectedEvents} events` : null));
    res.on('error', (error: NodeJS.ErrnoException) => end(`response ${error.code ?? error.message}`));
  });
  req.on('error', (error: NodeJS.ErrnoException) => {
    onOpen();
    end(`request ${error.code ?? error.message}`);
  });
  req.end(body);
}

process.on('message', (command: StreamLoadCommand) => {
  switch (command.type) {
    case 'open': {
      total = command.streams;
      let asked = 0;
      let opened = 0;
      // Every 10 ms at high rates; below 100/s one stream per tick, ticks spaced to keep the rate asked for.
      const everyMs = Math.max(10, Math.round(1000 / command.perSecond));
      const batch = Math.max(1, Math.round((command.perSecond * everyMs) / 1000));
      const onOpen = () => {
        if (++opened === total) reply({ type: 'opened' });
      };
      if (process.env['STREAM_LOAD_DEBUG']) setInterval(() => process.stderr.write(`load ${process.pid}: asked ${asked} opened ${opened} settled ${settled} errors ${JSON.stringify([...errors])}\n`), 5000).unref();
      const ramp = setInterval(() => {
        for (let i = 0; i < batch && asked < total; i++, asked++) openStream(command.url, command.body, command.headers, command.localAddress, command.events, onOpen);
        if (asked === total) clearInterval(ramp);
      }, everyMs);
      break;
    }
    case 'measure':
      measuring = true;
      windowEvents = 0;
      addedGap.fill(0);
      latency.fill(0);
      break;
    case 'stop':
      measuring = false;
      reply({ type: 'window', events: windowEvents, addedGap: [...addedGap], latency: [...latency], openNow: total - settled });
      break;
    case 'finish': {
      const answer = () => reply({ type: 'finished', completed, errors: [...errors] });
      if (settled === total) answer();
      else whenAllSettled = answer;
      break;
    }
  }
});
process.on('disconnect', () => process.exit(0));
reply({ type: 'ready' });
