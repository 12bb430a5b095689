// deploy/Dockerfile and deploy/kubernetes/*.yaml must agree with each other and with the gateway's own
// defaults (port, health path, shutdown grace, entry point), so that none of them can drift silently.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { CONFIG_DEFAULTS, readServerConfig } from '../../src/server-config.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');

// The gateway's own defaults, not copies of them.
const sourcePort: number = CONFIG_DEFAULTS.port;
const sourceShutdownGraceMs: number = CONFIG_DEFAULTS.shutdownGraceMs;

t.test('the gateway defaults the deployment is built around', async (t) => {
  t.equal(sourcePort, 8080, 'PORT defaults to 8080');
  t.equal(sourceShutdownGraceMs, 30_000, 'SHUTDOWN_GRACE_MS defaults to 30 s');
});

// ---- Dockerfile ----

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  image: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** Instructions of a Dockerfile: comments dropped, backslash continuations joined, split into stages at FROM. */
function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue; // also inside continuations, as Docker does
    if (trimmed.endsWith('\\')) {
      pending += `${trimmed.slice(0, -1)} `;
      continue;
    }
    const whole = pending + trimmed;
    pending = '';
    const match = /^(\S+)\s*(.*)$/.exec(whole)!;
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim() });
  }
  if (pending) throw new Error('the Dockerfile ends inside a line continuation');
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = instruction.args.split(/\s+/).filter((word) => !word.startsWith('--'));
      stages.push({ image: image!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${instruction.keyword} before the first FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

const all = (stage: Stage, keyword: string): string[] => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);

/** ENV of a stage, both `ENV A=1 B="2"` and the legacy `ENV A 1`. */
function envOf(stage: Stage): Map<string, string> {
  const env = new Map<string, string>();
  for (const args of all(stage, 'ENV')) {
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(args)) {
      for (const match of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
        const raw = match[2]!;
        env.set(match[1]!, /^["']/.test(raw) ? raw.slice(1, -1) : raw);
      }
    } else {
      const [name, ...value] = args.split(/\s+/);
      env.set(name!, value.join(' '));
    }
  }
  return env;
}

interface Copy {
  from: string | undefined;
  sources: string[];
  destination: string;
}
function copiesOf(stage: Stage): Copy[] {
  return all(stage, 'COPY').map((args) => {
    const words = args.split(/\s+/);
    const flags = words.filter((word) => word.startsWith('--'));
    const paths = args.startsWith('[') ? (JSON.parse(args) as string[]) : words.filter((word) => !word.startsWith('--'));
    const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
    return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
  });
}

/** `CMD ["a", "b"]` as an array; undefined for the shell form, whose shell would not forward SIGTERM. */
function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((word) => typeof word === 'string') ? (parsed as string[]) : undefined;
}

const stages = parseDockerfile(read('deploy/Dockerfile'));
const runtime = stages.at(-1)!;
const runtimeEnv = envOf(runtime);
const exposed = all(runtime, 'EXPOSE').flatMap((args) => args.split(/\s+/)).map((port) => Number(port.replace(/\/tcp$/, '')));

t.test('Dockerfile: a build stage and a runtime stage that takes only dist/ from it', async (t) => {
  t.ok(stages.length >= 2, `at least two FROM stages (found ${stages.length})`);
  const build = stages.find((stage) => all(stage, 'RUN').some((run) => /\bnpm run build\b/.test(run)));
  t.ok(build && build !== runtime, 'an earlier stage runs `npm run build`');
  t.ok(build?.name, 'the build stage is named (FROM ... AS <name>)');
  t.ok(all(build ?? runtime, 'RUN').some((run) => /\bnpm ci\b/.test(run)), 'the build stage installs with `npm ci` (the lockfile, dev dependencies included)');
  t.notOk(all(runtime, 'RUN').some((run) => /\bnpm run build\b|\btsc\b|\btsx\b/.test(run)), 'nothing is compiled in the runtime stage');

  const fromStages = copiesOf(runtime).filter((copy) => copy.from !== undefined);
  t.ok(fromStages.length > 0, 'the runtime stage copies from another stage');
  for (const copy of fromStages) {
    t.ok(stages.slice(0, -1).some((stage) => stage.name === copy.from), `COPY --from=${copy.from} names an earlier stage`);
  }
  t.ok(
    fromStages.some((copy) => copy.from === build?.name && copy.sources.some((source) => /(^|\/)dist\/?$/.test(source)) && /(^|\/)dist\/?$/.test(copy.destination)),
    'the runtime stage copies dist/ from the build stage',
  );
});

t.test('Dockerfile: every stage runs the Node line CI tests first, within package.json engines', async (t) => {
  // .ci/run fetches each tested line with scripts/ci/node.sh; the first is the one the image must use.
  const tested = [...read('.ci/run').matchAll(/scripts\/ci\/node\.sh (\d+)/g)].map((match) => Number(match[1]));
  t.ok(tested.length >= 2, `CI tests at least two Node lines (found ${tested.join(', ')})`);
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  const floor = Number(/^>=(\d+)$/.exec(engines)?.[1]);
  t.equal(floor, Math.min(...tested), `engines.node (${engines}) is the oldest line CI tests`);
  // The config stage holds one file and runs nothing (a named build context replaces it).
  for (const stage of stages.filter((stage) => stage.image !== 'scratch')) {
    const major = Number(/^node:(\d+)-bookworm-slim$/.exec(stage.image)?.[1]);
    t.equal(major, tested[0], `${stage.name ?? 'a stage'} is built FROM node:${tested[0]}-bookworm-slim (found ${stage.image})`);
  }
});

t.test('Dockerfile: COPY names its sources explicitly (there is no .dockerignore) and covers every build input', async (t) => {
  for (const stage of stages) {
    for (const copy of copiesOf(stage).filter((copy) => copy.from === undefined)) {
      for (const source of copy.sources) {
        const path = source.replace(/^\.\//, '').replace(/\/$/, '');
        t.notOk(['', '.', 'node_modules', 'dist', '.env'].includes(path) || /[*?]/.test(path), `COPY ${source} does not copy the whole context, node_modules, dist or secrets`);
        t.ok(existsSync(join(repoRoot, path)), `COPY source ${source} exists in the repository`);
      }
    }
  }
  const build = stages.find((stage) => all(stage, 'RUN').some((run) => /\bnpm run build\b/.test(run))) ?? stages[0]!;
  const copied = copiesOf(build).flatMap((copy) => (copy.from === undefined ? copy.sources : [])).map((source) => source.replace(/^\.\//, '').replace(/\/$/, ''));
  // What `npm run build` reads: scripts/build.ts checks routes.yaml against schemas/, generates src/generated/, tsc compiles src/.
  // routes.yaml comes from the config stage (next test).
  for (const input of ['package.json', 'package-lock.json', 'tsconfig.json', 'schemas', 'scripts/build.ts', 'src/server.ts']) {
    t.ok(copied.some((source) => source === input || input.startsWith(`${source}/`)), `the build stage copies ${input}`);
  }
  const runtimeCopied = copiesOf(runtime).flatMap((copy) => (copy.from === undefined ? copy.sources : []));
  t.ok(runtimeCopied.includes('package-lock.json'), 'the runtime stage copies the lockfile, so `npm ci` installs exactly what was tested');
  t.ok(runtimeCopied.includes('package.json'), 'the runtime stage copies package.json ("type": "module" for dist/*.js)');
});

t.test('Dockerfile: routes.yaml comes from the stage `config`, which --build-context config=DIR replaces; the shipped example by default', async (t) => {
  const config = stages.find((stage) => stage.name === 'config');
  t.equal(config?.image, 'scratch', 'FROM scratch AS config: one file, nothing run');
  t.strictSame(config?.instructions, [{ keyword: 'COPY', args: 'routes.yaml /routes.yaml' }], 'by default it holds the shipped routes.yaml, at the root as a context folder would');
  t.ok(existsSync(join(repoRoot, 'routes.yaml')), 'the default exists');
  const build = stages.find((stage) => all(stage, 'RUN').some((run) => /\bnpm run build\b/.test(run)))!;
  t.ok(stages.indexOf(config!) < stages.indexOf(build), 'the config stage comes before the build stage');
  const routes = copiesOf(build).filter((copy) => copy.sources.some((source) => /routes\.yaml$/.test(source)));
  t.strictSame(routes, [{ from: 'config', sources: ['/routes.yaml'], destination: './routes.yaml' }], 'the build stage takes routes.yaml from config only');
  const order = build.instructions.map((i) => i.keyword + ' ' + i.args);
  t.ok(order.findIndex((line) => line.includes('--from=config')) < order.findIndex((line) => /npm run build/.test(line)), 'it is in place before npm run build compiles it');
  t.notOk(all(build, 'ENV').some((env) => /ROUTES_FILE/.test(env)) || all(build, 'ARG').some((arg) => /ROUTES_FILE/.test(arg)), 'no ROUTES_FILE: the build compiles ./routes.yaml, the file from config');
});

t.test('Dockerfile: runtime stage installs production dependencies only and runs as node', async (t) => {
  const installs = all(runtime, 'RUN').filter((run) => /\bnpm (ci|install|i)\b/.test(run));
  t.ok(installs.length > 0, 'the runtime stage installs dependencies');
  for (const install of installs) {
    t.match(install, /\bnpm ci\b/, 'with `npm ci`');
    t.match(install, /--omit=dev\b/, 'with --omit=dev');
  }
  t.equal(runtimeEnv.get('NODE_ENV'), 'production', 'ENV NODE_ENV=production');
  const users = all(runtime, 'USER');
  t.equal(users.at(-1), 'node', 'the final USER is the unprivileged node user of the official image');
  t.equal(all(runtime, 'STOPSIGNAL').at(-1), 'SIGTERM', 'STOPSIGNAL SIGTERM: the signal the gateway drains on');
});

t.test('Dockerfile: listens where the gateway and the manifests expect', async (t) => {
  t.equal(runtimeEnv.get('HOST'), '0.0.0.0', 'HOST=0.0.0.0: the default 127.0.0.1 is unreachable from outside a container');
  t.equal(Number(runtimeEnv.get('PORT')), sourcePort, 'ENV PORT is the gateway default');
  t.strictSame(exposed, [sourcePort], 'EXPOSE is the gateway default port');
  const env = Object.fromEntries(runtimeEnv);
  t.throws(() => readServerConfig(env), { name: 'ConfigError', message: /anonymous/ }, 'the image alone refuses to serve anonymously: caller keys must be given at run time');
  const config = readServerConfig({ ...env, GATEWAY_API_KEYS: 'caller-key' });
  t.strictSame(exposed, [config.port], "the gateway's own config reader listens on the EXPOSEd port");
});

t.test('Dockerfile: CMD starts the compiled entry point in exec form', async (t) => {
  const cmd = all(runtime, 'CMD').at(-1);
  t.ok(cmd, 'the runtime stage has a CMD');
  t.notOk(all(runtime, 'ENTRYPOINT').length, 'no ENTRYPOINT wraps the CMD');
  const words = execForm(cmd ?? '');
  t.ok(words, 'CMD is in exec form, so node is PID 1 and receives SIGTERM');
  t.equal(words?.[0], 'node', 'CMD runs node directly (not npm, whose child would not get SIGTERM)');
  t.equal(words?.length, 2, 'CMD is `node <entry point>`');
  const entry = /^dist\/(.+)\.js$/.exec(words?.[1] ?? '');
  t.ok(entry, `CMD runs a file of dist/ (got ${words?.[1]})`);
  t.ok(entry && existsSync(join(repoRoot, `src/${entry[1]}.ts`)), `dist/${entry?.[1]}.js is compiled from an existing src/${entry?.[1]}.ts`);
  const { main } = JSON.parse(read('package.json')) as { main?: string };
  t.equal(words?.[1], main, 'CMD runs the "main" of package.json');
});

t.test('Dockerfile: HEALTHCHECK asks /health on the gateway port', async (t) => {
  const healthcheck = all(runtime, 'HEALTHCHECK').at(-1) ?? '';
  t.match(healthcheck, /\/health\b/, 'HEALTHCHECK requests /health');
  const command = execForm(healthcheck.replace(/^(--\S+\s+)*CMD\s+/, ''));
  t.ok(command, 'HEALTHCHECK CMD is in exec form');
  t.equal(command?.[0], 'node', 'runs node itself: slim images have no curl or wget');
  const fallbackPort = /process\.env\.PORT\s*\|\|\s*(\d+)/.exec(healthcheck);
  t.equal(Number(fallbackPort?.[1]), sourcePort, 'without PORT it probes the gateway default port');
});

// ---- Kubernetes manifests ----

interface Metadata {
  name: string;
  labels?: Record<string, string>;
}
interface ContainerPort {
  name?: string;
  containerPort: number;
}
interface Probe {
  httpGet?: { path?: string; port?: string | number };
  periodSeconds?: number;
  failureThreshold?: number;
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
}
interface Container {
  name: string;
  ports?: ContainerPort[];
  env?: { name: string; value?: string }[];
  envFrom?: { secretRef?: { name: string; optional?: boolean } }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds?: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
}
interface Deployment {
  apiVersion: string;
  kind: 'Deployment';
  metadata: Metadata;
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: { terminationGracePeriodSeconds?: number; securityContext?: SecurityContext; containers: Container[] };
    };
  };
}
interface Service {
  kind: 'Service';
  metadata: Metadata;
  spec: { type?: string; selector: Record<string, string>; ports?: { name?: string; port: number; targetPort?: string | number }[] };
}
interface Hpa {
  apiVersion: string;
  kind: 'HorizontalPodAutoscaler';
  metadata: Metadata;
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: { type: string; resource?: { name: string; target: { type: string; averageUtilization?: number } } }[];
  };
}
interface Secret {
  kind: 'Secret';
  metadata: Metadata;
  stringData?: Record<string, string>;
  data?: Record<string, string>;
}

/** The one document of a manifest file, which must parse without errors or warnings and be of the expected kind. */
function manifest<T extends { kind: string }>(file: string, kind: T['kind']): T {
  const documents = parseAllDocuments(read(`deploy/kubernetes/${file}`));
  if (!Array.isArray(documents) || documents.length !== 1) throw new Error(`${file}: expected exactly one YAML document`);
  const [document] = documents;
  const problems = [...document!.errors, ...document!.warnings];
  if (problems.length) throw new Error(`${file}: ${problems.map((problem) => problem.message).join('; ')}`);
  const value = document!.toJS() as T;
  if (value?.kind !== kind) throw new Error(`${file}: expected kind ${kind}, got ${String(value?.kind)}`);
  return value;
}

const deployment = manifest<Deployment>('deployment.yaml', 'Deployment');
const service = manifest<Service>('service.yaml', 'Service');
const hpa = manifest<Hpa>('hpa.yaml', 'HorizontalPodAutoscaler');
const secret = manifest<Secret>('secret.example.yaml', 'Secret');
const pod = deployment.spec.template.spec;
const podLabels = deployment.spec.template.metadata.labels;
const container = pod.containers[0]!;
const envValue = (name: string): string | undefined => container.env?.find((variable) => variable.name === name)?.value;
const httpPort = container.ports?.find((port) => port.name === 'http');
/** The literal env of the container (valueFrom entries are not resolvable here). */
const podEnv: Record<string, string> = Object.fromEntries((container.env ?? []).flatMap((variable) => (variable.value === undefined ? [] : [[variable.name, variable.value]])));
const secretValues = new Map<string, string>([
  ...Object.entries(secret.stringData ?? {}),
  ...Object.entries(secret.data ?? {}).map(([key, value]): [string, string] => [key, Buffer.from(value, 'base64').toString('utf8')]),
]);

/** Whether every label of the selector is on the pods. */
const selects = (selector: Record<string, string>): boolean =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => podLabels[key] === value);

/** Seconds the preStop hook holds the pod before SIGTERM: `sleep N` (exec or native) or node's setTimeout(..., ms). */
function preStopSeconds(): number {
  const preStop = container.lifecycle?.preStop;
  if (preStop?.sleep?.seconds !== undefined) return preStop.sleep.seconds;
  const command = (preStop?.exec?.command ?? []).join(' ');
  const sleep = /^(?:\S*\/)?sleep\s+(\d+)$/.exec(command) ?? /^(?:\S*\/)?(?:ba)?sh -c sleep\s+(\d+)$/.exec(command);
  if (sleep) return Number(sleep[1]);
  const timeout = /^node -e .*setTimeout\([^,]+,\s*(\d+)\s*\)/.exec(command);
  if (timeout) return Number(timeout[1]) / 1000;
  throw new Error(`preStop: cannot tell how long ${JSON.stringify(command)} pauses`);
}

t.test('Deployment: one container that listens on the gateway port, reachable from outside the pod', async (t) => {
  t.equal(deployment.apiVersion, 'apps/v1', 'Deployment apiVersion apps/v1');
  t.equal(pod.containers.length, 1, 'a single container');
  t.ok(selects(deployment.spec.selector.matchLabels), 'the selector matches the pod template labels');
  t.equal(httpPort?.containerPort, sourcePort, 'container port "http" is the gateway default port');
  t.equal(Number(envValue('PORT')), httpPort?.containerPort, 'env PORT is the container port');
  t.strictSame(exposed, [httpPort?.containerPort], 'the Dockerfile EXPOSEs the container port');
  t.equal(Number(runtimeEnv.get('PORT')), Number(envValue('PORT')), 'the Dockerfile and the Deployment set the same PORT');
  t.equal(envValue('HOST'), '0.0.0.0', 'env HOST=0.0.0.0: the default 127.0.0.1 is unreachable through the pod IP');
  t.equal(envValue('WORKERS'), '1', 'one worker per pod: the autoscaler scales pods, against one CPU request');
});

t.test('Deployment: readiness and liveness probe /health on the named port, liveness more leniently', async (t) => {
  for (const [which, probe] of [
    ['readinessProbe', container.readinessProbe],
    ['livenessProbe', container.livenessProbe],
  ] as const) {
    t.equal(probe?.httpGet?.path, '/health', `${which} requests /health`);
    t.equal(probe?.httpGet?.port, 'http', `${which} uses the named port "http"`);
  }
  // Kubernetes defaults: periodSeconds 10, failureThreshold 3.
  const patience = (probe: Probe | undefined): number => (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3);
  t.ok(
    patience(container.livenessProbe) > patience(container.readinessProbe),
    `liveness gives up later (${patience(container.livenessProbe)} s) than readiness (${patience(container.readinessProbe)} s)`,
  );
});

t.test('Deployment: the pod outlives the preStop pause plus a full drain', async (t) => {
  const shutdownGraceMs = Number(envValue('SHUTDOWN_GRACE_MS'));
  t.equal(shutdownGraceMs, sourceShutdownGraceMs, 'SHUTDOWN_GRACE_MS is the gateway default');
  const pause = preStopSeconds();
  t.ok(pause > 0, `preStop pauses before SIGTERM so load balancers stop sending first (${pause} s)`);
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  t.ok(grace > pause + shutdownGraceMs / 1000, `terminationGracePeriodSeconds ${grace} > preStop ${pause} s + drain ${shutdownGraceMs / 1000} s`);
});

t.test('Deployment: non-root, read-only, no privileges, bounded resources', async (t) => {
  const security = { ...pod.securityContext, ...container.securityContext };
  t.equal(security.runAsNonRoot, true, 'runAsNonRoot');
  // The image's USER is a name ("node"): the kubelet can enforce runAsNonRoot only against a numeric runAsUser.
  t.ok(Number.isInteger(security.runAsUser) && security.runAsUser! > 0, 'a numeric, non-zero runAsUser');
  t.equal(security.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem');
  t.equal(security.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation: false');
  t.ok(security.capabilities?.drop?.includes('ALL'), 'capabilities: drop ALL');
  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory']) t.ok(container.resources?.[kind]?.[resource], `resources.${kind}.${resource} is set`);
  }
});

t.test('Service: routes to the pods and resolves to the container port', async (t) => {
  t.ok(selects(service.spec.selector), 'the selector matches the pod template labels');
  const ports = service.spec.ports ?? [];
  t.ok(ports.length > 0, 'at least one port');
  for (const port of ports) {
    const target = port.targetPort ?? port.port;
    const resolved = typeof target === 'string' ? container.ports?.find((candidate) => candidate.name === target)?.containerPort : target;
    t.equal(resolved, sourcePort, `Service port ${port.port} reaches container port ${httpPort?.containerPort}`);
  }
});

t.test('HorizontalPodAutoscaler: scales this Deployment on CPU', async (t) => {
  t.equal(hpa.apiVersion, 'autoscaling/v2', 'HorizontalPodAutoscaler apiVersion autoscaling/v2');
  t.strictSame(hpa.spec.scaleTargetRef, { apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name }, 'scaleTargetRef names the Deployment');
  const min = hpa.spec.minReplicas ?? 1;
  t.ok(min >= 2, 'at least two pods, so a rollout or a node drain never leaves none');
  t.ok(min <= hpa.spec.maxReplicas, 'minReplicas <= maxReplicas');
  const replicas = deployment.spec.replicas ?? 1;
  t.ok(replicas >= min && replicas <= hpa.spec.maxReplicas, `the Deployment's ${replicas} replicas are within the autoscaler's range`);
  const cpu = hpa.spec.metrics?.find((metric) => metric.type === 'Resource' && metric.resource?.name === 'cpu');
  t.equal(cpu?.resource?.target.type, 'Utilization', 'a CPU utilization target');
  t.ok(container.resources?.requests?.['cpu'], 'CPU utilization is relative to the container CPU request, which must be set');
});

// What the Secret holds against config/routes.yaml is checked, with a gateway started on both, in kubernetes-example.test.ts.
t.test('Secret example: what the Deployment reads, only placeholders', async (t) => {
  const secretRefs = (container.envFrom ?? []).flatMap((source) => (source.secretRef ? [source.secretRef] : []));
  t.ok(secretRefs.some((ref) => ref.name === secret.metadata.name && ref.optional !== true), `the Deployment takes its env from Secret ${secret.metadata.name}, not optional`);
  const realLooking = /\bsk-[A-Za-z0-9_-]{20,}|\bsk-ant-|\bAIza[0-9A-Za-z_-]{20,}|\bgsk_[A-Za-z0-9]{20,}|\bxai-[A-Za-z0-9]{20,}|\b[A-Za-z0-9_-]{32,}\b/;
  for (const [key, value] of secretValues) {
    t.notMatch(value, realLooking, `${key} does not look like a real key`);
    t.match(value, /replace-me/, `${key} is an obvious placeholder`);
  }
});

t.test("the gateway's own config reader: the Deployment's env with the Secret starts as intended", async (t) => {
  // config/routes.yaml declares callers (kubernetes-example.test.ts starts a gateway on it).
  const config = readServerConfig({ ...podEnv, ...Object.fromEntries(secretValues) }, { callersDeclared: true });
  t.equal(config.port, httpPort?.containerPort, 'listens on the container port');
  t.equal(config.host, '0.0.0.0', 'on every interface of the pod');
  t.equal(config.workers, 1, 'one worker process');
  t.equal(config.shutdownGraceMs, Number(podEnv['SHUTDOWN_GRACE_MS']), 'drains for SHUTDOWN_GRACE_MS');
  t.strictSame(config.callerKeys, [], "no GATEWAY_API_KEYS: the callers' keys come from their key_env");
  t.ok(config.redisUrl, 'REDIS_URL: every pod counts the callers in one Redis');
});

interface Pdb {
  apiVersion: string;
  kind: 'PodDisruptionBudget';
  metadata: Metadata;
  spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number | string; minAvailable?: number | string };
}

t.test('PodDisruptionBudget: a drain evicts one gateway pod at a time, and is never blocked', async (t) => {
  const pdb = manifest<Pdb>('pdb.yaml', 'PodDisruptionBudget');
  t.equal(pdb.apiVersion, 'policy/v1');
  t.ok(selects(pdb.spec.selector.matchLabels), "the selector matches the gateway's pods");
  const min = hpa.spec.minReplicas ?? 1;
  const allowed = pdb.spec.maxUnavailable !== undefined ? Number(pdb.spec.maxUnavailable) : min - Number(pdb.spec.minAvailable ?? min);
  t.ok(allowed >= 1, `at the autoscaler's minimum of ${min} pods, ${allowed} may still be evicted`);
  t.ok(allowed < min, 'and never every pod at once');
});

t.test("Deployment: memory fits the open streams it is sized for, at docs/performance.md's measured figures", async (t) => {
  const performance = read('docs/performance.md');
  const perStreamKiB = Number(/RSS per open stream at [\d,]+ streams \| gateway ([\d.]+) KiB/.exec(performance)?.[1]);
  const warmMiB = Number(/gateway RSS after full GCs \| (\d+) MiB after warm-up/.exec(performance)?.[1]);
  // The cluster primary runs beside the worker in every pod (docs/reloading.md).
  const primaryMiB = Number(/RSS of the cluster primary[^|]*\| (\d+) MiB/.exec(performance)?.[1]);
  t.ok(perStreamKiB > 0 && warmMiB > 0 && primaryMiB > 0, `measured: ${perStreamKiB} KiB per open stream, ${warmMiB} MiB warmed up, ${primaryMiB} MiB the primary`);
  const annotations = deployment.spec.template.metadata.annotations ?? {};
  const streams = Number(annotations['chat-routing-gateway/open-streams-per-pod']);
  t.ok(streams >= 1000, `sized for ${streams} open streams per pod`);
  const mebibytes = (quantity: string | undefined) => {
    const match = /^(\d+)(Mi|Gi)$/.exec(quantity ?? '');
    return match ? Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) : NaN;
  };
  const requested = mebibytes(container.resources?.requests?.['memory']);
  const needed = warmMiB + primaryMiB + (streams * perStreamKiB) / 1024;
  t.ok(requested >= needed, `requests.memory ${requested} MiB >= ${warmMiB} MiB + ${primaryMiB} MiB + ${streams} x ${perStreamKiB} KiB = ${Math.round(needed)} MiB`);
  t.equal(mebibytes(container.resources?.limits?.['memory']), requested, 'limit = request: the scheduler reserves what the pod may use');
});
