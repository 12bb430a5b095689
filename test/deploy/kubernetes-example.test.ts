// deploy/kubernetes/ as one example: a gateway started with the Deployment's own env, the example Secret and
// config/routes.yaml (the roster its image is built from) serves the Secret's callers and counts them in Redis
// (a real redis-server standing in for REDIS_URL). The three must agree: a caller without its keys, GATEWAY_API_KEYS
// beside callers, more than one pod without Redis, a Secret variable nothing reads each fail; a provider added
// without its key only warns, and the gateway still starts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { compileRoutes } from '../../scripts/routes/compile-routes.js';
import { readServerConfig } from '../../src/server-config.js';
import { codeSpans, readPage, REPO, tablesOf } from '../docs/docs-pages.js';
import { startGateway } from '../helpers/gateway.js';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.js';
import { startRedisServer } from '../policy/redis-server.js';
import { checkAgreement, type KubernetesExample } from './kubernetes-agreement.js';

const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const ROUTES = read('deploy/kubernetes/config/routes.yaml');

interface Container {
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
}
interface Workload {
  kind: string;
  metadata: { name: string };
  spec: { replicas?: number; maxReplicas?: number; template?: { spec: { containers: Container[] } } };
}
const documents = (file: string) => parseAllDocuments(read(`deploy/kubernetes/${file}`)).map((document) => document.toJS() as Workload);
const deployment = documents('deployment.yaml')[0]!;
const hpa = documents('hpa.yaml')[0]!;
const redis = documents('redis.yaml').find((document) => document.kind === 'Deployment')!;
const secretManifest = parse(read('deploy/kubernetes/secret.example.yaml')) as { metadata: { name: string }; stringData: Record<string, string> };
const SECRET = new Map(Object.entries(secretManifest.stringData));
const POD_ENV: Record<string, string> = Object.fromEntries(
  (deployment.spec.template!.spec.containers[0]!.env ?? []).flatMap((variable) => (variable.value === undefined ? [] : [[variable.name, variable.value]])),
);
/** Secret keys the example Redis reads by secretKeyRef. */
const READ_BY_REDIS = new Set(
  (redis.spec.template!.spec.containers[0]!.env ?? []).flatMap((variable) => {
    const ref = variable.valueFrom?.secretKeyRef;
    return ref && ref.name === secretManifest.metadata.name ? [ref.key] : [];
  }),
);
/** The variables docs/environment.md says the gateway reads (docs-env.test.ts keeps that table true). */
const GATEWAY_VARIABLES = new Set(
  tablesOf(readPage('docs/environment.md'))
    .filter((table) => table.header[0] === 'Variable')
    .flatMap((table) => table.rows.flatMap((row) => codeSpans(row[0]!))),
);

function example(routes: string, secret = SECRET, podEnv = POD_ENV): KubernetesExample {
  const compiled = compileRoutes(routes);
  if (!compiled.ok) throw new Error(`routes do not compile: ${JSON.stringify(compiled.problems)}`);
  const maxPods = Math.max(deployment.spec.replicas ?? 1, hpa.spec.maxReplicas ?? 1);
  return { tables: compiled.tables, secret, podEnv, maxPods, readElsewhere: READ_BY_REDIS, gatewayVariables: GATEWAY_VARIABLES };
}
const without = (name: string) => new Map([...SECRET].filter(([key]) => key !== name));

/** config/routes.yaml with one more provider (and a model of it) whose key the Secret does not have. */
const WITH_NEW_PROVIDER = ROUTES.replace('\nmodels:\n', '\n  mistral:\n    base_url: https://api.mistral.ai/v1\n    api_key_env: MISTRAL_API_KEY\n\nmodels:\n').replace(
  '  openai/gpt-4.1-mini:',
  '  mistral/mistral-small-latest: { price: { input_per_mtok: 0.10, output_per_mtok: 0.30 } }\n  openai/gpt-4.1-mini:',
);

t.test('the Secret, config/routes.yaml and the Deployment agree', async (t) => {
  t.strictSame(checkAgreement(example(ROUTES)), { problems: [], warnings: [] });
  t.ok(READ_BY_REDIS.has('REDIS_PASSWORD'), "the example Redis takes its password from the gateway's Secret");
  const url = new URL(SECRET.get('REDIS_URL')!);
  t.equal(decodeURIComponent(url.password), SECRET.get('REDIS_PASSWORD'), 'REDIS_URL carries that password');
  const service = parseAllDocuments(read('deploy/kubernetes/redis.yaml')).map((document) => document.toJS() as { kind: string; metadata: { name: string }; spec: { ports: { port: number }[] } }).find((document) => document.kind === 'Service')!;
  t.equal(url.hostname, service.metadata.name, "REDIS_URL names the example Redis's Service");
  t.equal(Number(url.port || 6379), service.spec.ports[0]!.port, 'on its port');
});

t.test('the example Redis: its Service reaches it, it asks for the password, it runs unprivileged', async (t) => {
  interface RedisPod {
    metadata: { labels: Record<string, string> };
    spec: { securityContext?: { runAsNonRoot?: boolean }; containers: { args?: string[]; ports?: { name?: string; containerPort: number }[]; securityContext?: { readOnlyRootFilesystem?: boolean } }[] };
  }
  const parts = parseAllDocuments(read('deploy/kubernetes/redis.yaml')).map((document) => document.toJS() as { kind: string; spec: Record<string, unknown> });
  t.strictSame(parts.map((part) => part.kind).sort(), ['Deployment', 'Service']);
  const pod = (parts.find((part) => part.kind === 'Deployment')!.spec['template'] as RedisPod);
  const service = parts.find((part) => part.kind === 'Service')!.spec as { selector: Record<string, string>; ports: { port: number; targetPort: string | number }[] };
  t.ok(Object.entries(service.selector).every(([key, value]) => pod.metadata.labels[key] === value), 'the Service selects the Redis pod');
  const container = pod.spec.containers[0]!;
  const target = service.ports[0]!.targetPort;
  const port = container.ports?.find((candidate) => candidate.name === target || candidate.containerPort === target);
  t.equal(port?.containerPort, 6379, 'and reaches its port');
  const args = container.args ?? [];
  t.equal(args[args.indexOf('--requirepass') + 1], '$(REDIS_PASSWORD)', 'Redis requires the Secret\'s password');
  t.equal(pod.spec.securityContext?.runAsNonRoot, true, 'non-root');
  t.equal(container.securityContext?.readOnlyRootFilesystem, true, 'read-only root filesystem');
});

t.test('each disagreement fails the check', async (t) => {
  /** The one problem the check finds. */
  const problem = (routes: string, secret: Map<string, string> = SECRET): string => {
    const { problems } = checkAgreement(example(routes, secret));
    t.equal(problems.length, 1, problems.join('; '));
    return problems[0] ?? '';
  };
  t.match(problem(ROUTES, new Map([...SECRET, ['GATEWAY_API_KEYS', 'replace-me']])), /GATEWAY_API_KEYS is set while routes.yaml declares callers/);
  t.match(problem(ROUTES, without('WEB_APP_KEYS')), /caller "web-app": its key_env WEB_APP_KEYS is not in the Secret/);
  t.match(problem(ROUTES, without('REDIS_URL')), /up to 10 pods and callers with limits or budgets, but no REDIS_URL/);
  t.match(problem(ROUTES, new Map([...SECRET, ['MISTRAL_API_KEY', 'replace-me']])), /the Secret holds MISTRAL_API_KEY, which nothing reads/);
  t.match(checkAgreement(example(ROUTES.replace(/\ncallers:[\s\S]*?\ndefaults:/, '\ndefaults:'))).problems.join('; '), /declares no callers/);
});

t.test('a provider added to routes.yaml without its key in the Secret: a warning, not a failure', async (t) => {
  const agreement = checkAgreement(example(WITH_NEW_PROVIDER));
  t.strictSame(agreement.problems, []);
  t.equal(agreement.warnings.length, 1);
  t.match(agreement.warnings[0], /provider "mistral": MISTRAL_API_KEY is not in the Secret/);
});

t.test('a gateway with the manifests own env, Secret and routes: serves the callers, counts in Redis, starts with a provider not yet keyed', async (t) => {
  const redisServer = await startRedisServer();
  t.teardown(() => redisServer.stop());
  const upstream = await startMockUpstream((request, res) =>
    sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: JSON.parse(request.body).model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }),
  );
  t.teardown(() => upstream.close());
  // The stand-in takes the example Redis's password, so the Secret's REDIS_URL is used as is but for host and port.
  const admin = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  await admin.config('SET', 'requirepass', SECRET.get('REDIS_PASSWORD')!);
  admin.disconnect();
  const redisUrl = new URL(SECRET.get('REDIS_URL')!);
  redisUrl.hostname = '127.0.0.1';
  redisUrl.port = String(redisServer.port);
  // As the pod would get it: the Deployment's env, then the Secret (envFrom).
  const env: Record<string, string> = { ...POD_ENV, ...Object.fromEntries(SECRET), REDIS_URL: redisUrl.href };
  const compiled = compileRoutes(WITH_NEW_PROVIDER);
  if (!compiled.ok) throw new Error('routes do not compile');
  const callersDeclared = Object.keys(compiled.tables.callers).length > 0;
  const config = readServerConfig(env, { callersDeclared });
  t.equal(config.host, '0.0.0.0', "the pod's own listening config is accepted (the test itself listens on loopback)");
  t.throws(() => readServerConfig({ ...env, GATEWAY_API_KEYS: 'replace-me' }, { callersDeclared }), { name: 'ConfigError' }, 'with GATEWAY_API_KEYS beside callers it would not start');

  const gateway = await startGateway({
    routes: WITH_NEW_PROVIDER,
    env: { ...env, GATEWAY_OPENAI_BASE_URL: `${upstream.origin}/v1`, GATEWAY_ANTHROPIC_BASE_URL: `${upstream.origin}/v1` },
    callerKeys: config.callerKeys,
    ...(config.redisUrl ? { redisUrl: config.redisUrl } : {}),
  });
  t.teardown(() => gateway.close());
  t.match(gateway.warnings.join('\n'), /not configured, no key set: mistral \(MISTRAL_API_KEY\)/, 'the unkeyed provider is warned about at start-up');
  t.notMatch(gateway.warnings.join('\n'), /counted in the process/, 'counted in Redis, not per pod');

  const ask = (key: string, model = 'openai/gpt-4.1-mini') => gateway.post({ model, messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
  const webAppKey = SECRET.get('WEB_APP_KEYS')!.split(',')[1]!;
  const answer = await ask(webAppKey);
  t.equal(answer.status, 200, "a key of the Secret's WEB_APP_KEYS is the caller web-app");
  t.match(await gateway.requestLog(answer.headers.get('x-request-id')!), { caller: 'web-app', status: 200 });
  t.equal((await ask(SECRET.get('BATCH_JOBS_KEYS')!, 'anthropic/claude-haiku-4-5')).status, 403, "batch-jobs may use only the models routes.yaml gives it");
  t.equal((await ask('not-a-key-of-the-secret')).status, 401);
  t.equal((await ask(webAppKey, 'mistral/mistral-small-latest')).status, 500, 'the unkeyed provider answers provider_not_configured');

  const client = new Redis(redisUrl.href, { lazyConnect: true, maxRetriesPerRequest: 1 });
  t.teardown(() => client.disconnect());
  await client.connect();
  t.ok((await client.keys('chat-routing-gateway:{web-app}:*')).length > 0, "web-app's counts are in Redis, shared by every pod");
});
