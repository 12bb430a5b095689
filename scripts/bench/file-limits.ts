// bench:streams holds thousands of sockets in one process: each open stream costs the target two descriptors (the
// caller's socket and the provider's), the provider and each load process one. This module reads and raises the
// open-file limit of a running process (prlimit --pid, util-linux) and says how many streams a limit leaves room for.
// Raising the hard limit needs CAP_SYS_RESOURCE; without it the soft limit goes up to the hard one and no further.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface FileLimit {
  readonly soft: number;
  readonly hard: number;
}

/** Descriptors to spare beyond the streams': /health probes, /metrics scrapes, the log file, connections being set up. */
const SPARE = 32;

export function fileLimit(pid: number): FileLimit {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
  const value = (text: string | undefined) => (text === undefined || text === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(text));
  return { soft: value(line?.[1]), hard: value(line?.[2]) };
}

export function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The limit `pid` needs to hold `sockets` more sockets than it has open now. */
export function filesNeeded(pid: number, sockets: number): number {
  return openFiles(pid) + sockets + SPARE;
}

/** Raises `pid`'s open-file limit to at least `wanted` where allowed (else to its hard limit); returns the limit it has now. */
export function raiseFileLimit(pid: number, wanted: number): FileLimit {
  const before = fileLimit(pid);
  if (before.soft >= wanted) return before;
  const attempts = [`${wanted}:${Math.max(wanted, before.hard)}`, `${Math.min(wanted, before.hard)}:${before.hard}`];
  for (const nofile of attempts) {
    try {
      execFileSync('prlimit', ['--pid', String(pid), `--nofile=${nofile}`], { stdio: 'ignore' });
      break;
    } catch {
      // no CAP_SYS_RESOURCE for the hard limit: the next attempt stays under it
    }
  }
  return fileLimit(pid);
}

/** The streams a process with `limit` can hold when each costs `perStream` descriptors on top of those open now. */
export function streamsWithin(pid: number, limit: FileLimit, perStream: number): number {
  return Math.max(0, Math.floor((limit.soft - openFiles(pid) - SPARE) / perStream));
}

export const limitText = (limit: FileLimit) => `${limit.soft === Number.MAX_SAFE_INTEGER ? 'unlimited' : limit.soft} (hard ${limit.hard === Number.MAX_SAFE_INTEGER ? 'unlimited' : limit.hard})`;
