import type { ServerResponse } from 'node:http';
import { createServer, type Socket } from 'node:net';
import type { Test } from 'tap';
import { PROVIDER_KEY, startGateway, type RunningGateway } from './gateway.js';
import { completionBody, sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from './mock-upstream.js';
import { startMockAnthropic, type MockAnthropic } from './mock-anthropic.js';
import type { Telemetry } from '../../src/trace/telemetry.js';

/** Keys of the pool's two endpoints and of the backup provider: each must reach only its own endpoint. */
export const KEYS = { a: 'sk-endpoint-a-key-0001', b: 'sk-endpoint-b-key-0002', backup: 'sk-backup-key-0003' };

/**
 * pool: two endpoints (a weight 1, b weight 3); solo: one endpoint; backup: another provider; claude: the anthropic dialect.
 * solo/main and pool/main fall back to backup/other (another upstream model), solo/to-claude to claude/sonnet.
 */
export function failoverRoutes(maxAttempts = 3, breaker = '{ consecutive_failures: 5 }'): string {
  return `version: 1
providers:
  backup: { base_url: http://127.0.0.1:9/v1, base_url_env: BACKUP_URL, api_key_env: BACKUP_KEY }
  claude: { dialect: anthropic, base_url: http://127.0.0.1:9/v1, base_url_env: CLAUDE_URL, api_key_env: MOCK_API_KEY }
  pool:
    endpoints:
      - { name: a, base_url: http://127.0.0.1:9/v1, base_url_env: A_URL, api_key_env: A_KEY }
      - { name: b, base_url: http://127.0.0.1:9/v1, base_url_env: B_URL, api_key_env: B_KEY, weight: 3 }
  solo:
    base_url: http://127.0.0.1:9/v1
    base_url_env: SOLO_URL
    api_key_env: MOCK_API_KEY
    connect_timeout_ms: 150
    timeout_ms: 400
models:
  backup/other: { upstream_model: other-upstream }
  claude/sonnet: { upstream_model: claude-sonnet-x, max_output_tokens: 1000 }
  pool/main: { upstream_model: main-upstream, fallback: [backup/other] }
  solo/main: { upstream_model: main-upstream, fallback: [backup/other] }
  solo/to-claude: { upstream_model: main-upstream, fallback: [claude/sonnet] }
defaults: { max_attempts: ${maxAttempts}, breaker: ${breaker} }
errors:
  "4xx": { status: 400, type: invalid_request_error, code: invalid_request, gateway_code: provider_rejected_request }
  default: { status: 502, type: server_error, code: upstream_error, gateway_code: provider_error }
`;
}

/** An upstream whose answer the test changes as it goes; it always answers a completion of the model it was sent. */
export type Behaviour = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;
export const healthy: Behaviour = (request, res) => sendJson(res, 200, completionBody(String(JSON.parse(request.body).model)));
export const failing = (status: number): Behaviour => (_request, res) => sendJson(res, status, { error: { message: `failed with ${status}`, type: 'x' } });

export interface Switchable extends MockUpstream {
  behave: Behaviour;
}

export async function switchable(t: Test, behaviour: Behaviour = healthy): Promise<Switchable> {
  const holder = { behave: behaviour };
  const upstream = await startMockUpstream((request, res) => holder.behave(request, res));
  t.teardown(() => upstream.close());
  return Object.defineProperty(upstream, 'behave', { get: () => holder.behave, set: (value: Behaviour) => void (holder.behave = value) }) as Switchable;
}

export interface Rig {
  readonly gateway: RunningGateway;
  readonly a: Switchable;
  readonly b: Switchable;
  readonly solo: Switchable;
  readonly backup: Switchable;
  readonly claude: MockAnthropic;
}

/** Every provider of failoverRoutes on its own real mock; `soloUrl` replaces solo's (a dead port, a silent server). */
export async function startRig(t: Test, options: { maxAttempts?: number; soloUrl?: string; breaker?: string; telemetry?: Telemetry } = {}): Promise<Rig> {
  const [a, b, solo, backup] = await Promise.all([switchable(t), switchable(t), switchable(t), switchable(t)]);
  const claude = await startMockAnthropic(() => ({
    json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-x', content: [{ type: 'text', text: 'from claude' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } },
  }));
  t.teardown(() => claude.close());
  const gateway = await startGateway({
    routes: failoverRoutes(options.maxAttempts, options.breaker),
    env: {
      A_URL: `${a.origin}/v1`, A_KEY: KEYS.a, B_URL: `${b.origin}/v1`, B_KEY: KEYS.b,
      SOLO_URL: options.soloUrl ?? `${solo.origin}/v1`, BACKUP_URL: `${backup.origin}/v1`, BACKUP_KEY: KEYS.backup,
      CLAUDE_URL: `${claude.origin}/v1`, MOCK_API_KEY: PROVIDER_KEY,
    },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
  t.teardown(() => gateway.close());
  return { gateway, a, b, solo, backup, claude };
}

/** A port nothing listens on: connecting is refused. */
export async function refusedOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Accepts TCP and says nothing: a TLS handshake to it never completes (connect_timeout_ms). */
export async function silentOrigin(t: Test): Promise<string> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `https://127.0.0.1:${(server.address() as { port: number }).port}`;
}

export const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

/** The model each recorded request asked its provider for. */
export const modelsSent = (upstream: MockUpstream) => upstream.requests.map((request) => JSON.parse(request.body).model as string);
