// deploy/systemd/chat-routing-gateway.service must reload by SIGHUP to the primary and give the drain its time.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { CONFIG_DEFAULTS } from '../../src/server-config.js';

const unit = readFileSync(new URL('../../deploy/systemd/chat-routing-gateway.service', import.meta.url), 'utf8');
const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(unit)?.[1];

t.test('systemd unit: reload is SIGHUP to the primary, stop is SIGTERM with time for the drain', async (t) => {
  t.equal(setting('ExecReload'), '/bin/kill -HUP $MAINPID');
  t.equal(setting('KillSignal'), 'SIGTERM');
  t.equal(setting('KillMode'), 'mixed', 'SIGTERM to the primary, which has its workers drain');
  // The drain's grace plus 2 s of final words must end before systemd's SIGKILL.
  t.ok(Number(setting('TimeoutStopSec')) * 1000 > CONFIG_DEFAULTS.shutdownGraceMs + 2000);
  t.match(setting('ExecStart'), /node \S+\/dist\/server\.js$/);
});
