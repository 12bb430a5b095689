// The gateway child process, and what /proc says about it: resident memory and open TCP sockets.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildStats } from './gateway-child.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./gateway-child.ts', import.meta.url));

export interface GatewayChild {
  readonly pid: number;
  readonly port: number;
  readonly origin: string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s); resolves with its exit code or signal. */
  stop(): Promise<string>;
  /** Set when the child died on its own. */
  exited(): string | null;
  /** Requests it still tracks and its heap after full GCs (asked over IPC). */
  stats(): Promise<ChildStats>;
}

/** `node --expose-gc --import tsx scripts/soak/gateway-child.ts`: the gateway from src/, in its own process. */
export async function startGatewayChild(env: Record<string, string>): Promise<GatewayChild> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  let exitedWith: string | null = null;
  child.stderr!.on('data', (piece: Buffer) => {
    output += piece.toString();
    process.stderr.write(`[gateway] ${piece.toString()}`);
  });
  const exit = once(child, 'exit').then(([code, signal]) => (exitedWith = signal ? String(signal) : `exit ${String(code)}`));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (piece: Buffer) => {
      output += piece.toString();
      const match = /listening on port (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    void exit.then((how) => reject(new Error(`the gateway child ended (${how}) before listening:\n${output}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    port,
    origin: `http://127.0.0.1:${port}`,
    exited: () => exitedWith,
    stats: () =>
      new Promise<ChildStats>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the gateway child did not answer "stats" within 10 s')), 10_000);
        child.once('message', (stats) => {
          clearTimeout(timer);
          resolve(stats as ChildStats);
        });
        child.send('stats');
      }),
    async stop() {
      if (exitedWith) return exitedWith;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      const how = await exit;
      clearTimeout(timer);
      return how;
    },
  };
}


const TCP_STATES: Readonly<Record<string, string>> = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '03': 'SYN_RECV',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '09': 'LAST_ACK',
  '0A': 'LISTEN',
  '0B': 'CLOSING',
};

export interface TcpSocket {
  readonly localPort: number;
  readonly remotePort: number;
  readonly state: string;
}

/**
 * The TCP sockets the process holds a file descriptor for: its fds that are `socket:[inode]`, matched
 * against /proc/net/tcp and tcp6. `otherSockets` counts socket fds that are not TCP (pipes are not sockets).
 */
export function tcpSocketsOf(pid: number): { tcp: TcpSocket[]; otherSockets: number } {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed while we looked
    }
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]!);
  }
  const tcp: TcpSocket[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [, local, remote, state] = fields;
      const inode = fields[9];
      if (!local || !remote || !state || !inode || !inodes.has(inode)) continue;
      inodes.delete(inode);
      tcp.push({ localPort: portOf(local), remotePort: portOf(remote), state: TCP_STATES[state] ?? state });
    }
  }
  return { tcp, otherSockets: inodes.size };
}

function portOf(address: string): number {
  return parseInt(address.slice(address.indexOf(':') + 1), 16);
}
