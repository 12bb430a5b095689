// Where a process's threads spent their time, from /proc/<pid>/task/*/schedstat (Linux with schedstats; each line is
// time on a CPU and time runnable but waiting for one, in ns). bench:streams reads the gateway worker's once a
// second, so that a second of event-loop lag can say whether the main thread was busy, or ready and waiting for
// its core while other threads of the process held it (on Node 24 V8's threads are named V8Worker: its concurrent
// and parallel GC, and its optimizing compilers).
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadTimes {
  /** The main thread (the event loop): on its CPU, and runnable but waiting for it, ms. */
  readonly mainRunMs: number;
  readonly mainWaitMs: number;
  /** V8's worker threads (named V8Worker on Node 24; 0 where they carry no name), on a CPU, ms. */
  readonly v8RunMs: number;
  /** Every other thread (libuv's pool, the inspector's, node's own unnamed ones on Node 22), on a CPU, ms. */
  readonly otherRunMs: number;
}

/** The process's threads' times so far, or null where /proc has no schedstat (or the process is gone). */
export function threadTimes(pid: number): ThreadTimes | null {
  let mainRun: number | undefined;
  let mainWait = 0;
  let v8Run = 0;
  let otherRun = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let run: number;
      let wait: number;
      let name: string;
      try {
        [run = 0, wait = 0] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8');
      } catch {
        continue; // the thread ended between the listing and the read
      }
      if (Number(tid) === pid) [mainRun, mainWait] = [run, wait];
      else if (name.startsWith('V8Worker')) v8Run += run;
      else otherRun += run;
    }
  } catch {
    return null;
  }
  if (mainRun === undefined) return null;
  return { mainRunMs: mainRun / 1e6, mainWaitMs: mainWait / 1e6, v8RunMs: v8Run / 1e6, otherRunMs: otherRun / 1e6 };
}

/** What each thread group spent between two readings. */
export function threadTimesBetween(before: ThreadTimes, after: ThreadTimes): ThreadTimes {
  return {
    mainRunMs: after.mainRunMs - before.mainRunMs,
    mainWaitMs: after.mainWaitMs - before.mainWaitMs,
    v8RunMs: after.v8RunMs - before.v8RunMs,
    otherRunMs: after.otherRunMs - before.otherRunMs,
  };
}
