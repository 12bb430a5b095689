import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got, { type Got } from 'got';
import { DIALECTS } from '../dialects/index.js';
import type { Dialect } from '../dialects/dialect.js';
import type { ProviderTable, RouteTables } from '../generated/types/route-tables.js';
import { baseUrlProblem } from './base-url-rules.js';
import { MIN_REDACTED_SECRET_CHARS, secretRedactor, type Redact } from './redact-secrets.js';

/** A provider as this process will call it: env applied, client built once at start-up. */
export interface RuntimeProvider {
  readonly id: string;
  readonly table: ProviderTable;
  readonly dialect: Dialect;
  readonly baseUrl: string;
  /** The api_key_env that is unset in this process, or null when the provider is ready. */
  readonly missingKeyEnv: string | null;
  /** got instances with every fixed option (timeouts included), so a request adds only its body and id. */
  readonly clients: { readonly streamed: Got; readonly whole: Got };
  /** Takes this provider's key out of text it sent before the caller sees it (a provider may quote it). */
  readonly redact: Redact;
}

export interface RuntimeProviders {
  readonly byId: ReadonlyMap<string, RuntimeProvider>;
  /** One line per provider that cannot serve yet, for the start-up log. No values, only names. */
  readonly warnings: readonly string[];
  /** Takes every configured provider key out of text: for error envelopes and log lines. */
  readonly redact: Redact;
  /** Closes the keep-alive sockets to every provider. */
  close(): void;
}

/**
 * Builds the got instances of each provider (one per timeout mode) with every fixed option set here, so a request only adds
 * its body and its request id. Redirects are not followed (a key must not travel to
 * another host), nothing is retried (the caller's SDK decides), nothing is decompressed (we do not ask for it).
 */
export function prepareProviders(tables: RouteTables, env: Readonly<Record<string, string | undefined>>, userAgent: string): RuntimeProviders {
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxFreeSockets: 256, scheduling: 'lifo' as const };
  const agent = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  const byId = new Map<string, RuntimeProvider>();
  const warnings: string[] = [];
  const keys: string[] = [];
  for (const table of Object.values(tables.providers)) {
    if (!table) continue;
    const baseUrl = baseUrlFor(table, env);
    const key = table.apiKeyEnv ? env[table.apiKeyEnv] : undefined;
    const missingKeyEnv = table.apiKeyEnv && !key ? table.apiKeyEnv : null;
    if (missingKeyEnv) warnings.push(`provider "${table.id}" is not configured: ${missingKeyEnv} is not set; its models answer 500 provider_not_configured`);
    if (key && key.length < MIN_REDACTED_SECRET_CHARS) {
      warnings.push(`provider "${table.id}": ${table.apiKeyEnv} is shorter than ${MIN_REDACTED_SECRET_CHARS} characters, so it is not redacted from the provider's answers`);
    }
    if (key) keys.push(key);
    const headers: Record<string, string> = { 'user-agent': userAgent, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const [name, value] of Object.entries(table.headers)) if (value !== undefined) headers[name.toLowerCase()] = value;
    // The scheme (bearer, or the raw key under the dialect's or routes.yaml's header) was resolved by the build.
    if (key && table.auth) headers[table.auth.header] = table.auth.scheme === 'bearer' ? `Bearer ${key}` : key;
    const client = got.extend({
      prefixUrl: baseUrl,
      method: 'POST',
      headers,
      agent,
      retry: { limit: 0 },
      followRedirect: false,
      decompress: false,
      throwHttpErrors: false,
      http2: false,
    });
    // timeout_ms bounds the whole response of a non-streamed call, the response headers of a streamed one.
    const connect = { connect: table.connectTimeoutMs, secureConnect: table.connectTimeoutMs };
    const clients = {
      streamed: client.extend({ timeout: { ...connect, response: table.timeoutMs } }),
      whole: client.extend({ timeout: { ...connect, request: table.timeoutMs } }),
    };
    byId.set(table.id, { id: table.id, table, dialect: DIALECTS[table.dialect], baseUrl, missingKeyEnv, clients, redact: secretRedactor(key ? [key] : []) });
  }
  return {
    byId,
    warnings,
    redact: secretRedactor(keys),
    close() {
      agent.http.destroy();
      agent.https.destroy();
    },
  };
}

function baseUrlFor(table: ProviderTable, env: Readonly<Record<string, string | undefined>>): string {
  const override = table.baseUrlEnv ? env[table.baseUrlEnv] : undefined;
  if (!override) return table.baseUrl;
  // The routes compiler's own rule for base_url; the value is not echoed (it may hold a password).
  const problem = baseUrlProblem(override);
  if (problem) throw new Error(`${table.baseUrlEnv} (the base_url of provider "${table.id}"): ${problem}`);
  return override.replace(/\/+$/, '');
}
