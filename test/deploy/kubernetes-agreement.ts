// Whether deploy/kubernetes/'s Secret, its routes.yaml and its Deployment agree, as problems (the example is
// wrong: the test fails) and warnings (it works, with something missing: a provider added without its key).
import type { RouteTables } from '../../src/generated/types/route-tables.js';

export interface KubernetesExample {
  readonly tables: RouteTables;
  /** The Secret's variables, decoded. */
  readonly secret: ReadonlyMap<string, string>;
  /** The container's literal env (name: value). */
  readonly podEnv: Readonly<Record<string, string>>;
  /** The most pods that may run at once: the larger of replicas and the autoscaler's maxReplicas. */
  readonly maxPods: number;
  /** Secret variables other manifests read by secretKeyRef (the example Redis's password), not the gateway. */
  readonly readElsewhere: ReadonlySet<string>;
  /** What the gateway reads itself besides routes.yaml's names (docs/environment.md). */
  readonly gatewayVariables: ReadonlySet<string>;
}

export interface Agreement {
  readonly problems: string[];
  readonly warnings: string[];
}

export function checkAgreement(example: KubernetesExample): Agreement {
  const { tables, secret } = example;
  const problems: string[] = [];
  const warnings: string[] = [];
  const has = (name: string) => secret.has(name) || example.podEnv[name] !== undefined;
  const callers = Object.values(tables.callers).filter((caller) => caller !== undefined);
  if (callers.length === 0) problems.push('routes.yaml declares no callers: the example serves named callers');
  for (const name of ['GATEWAY_API_KEYS', 'GATEWAY_API_KEYS_FILE']) {
    if (callers.length > 0 && has(name)) problems.push(`${name} is set while routes.yaml declares callers: the gateway refuses to start`);
  }
  const keyEnvs = new Set<string>();
  for (const caller of callers) {
    if (caller.keyEnv === null) continue;
    keyEnvs.add(caller.keyEnv);
    if (!has(caller.keyEnv)) problems.push(`caller "${caller.name}": its key_env ${caller.keyEnv} is not in the Secret, so it has no key`);
  }
  const counted = callers.some((caller) => caller.budget !== null || Object.values(caller.limits).some((limit) => limit !== null));
  if (counted && example.maxPods > 1 && !has('REDIS_URL')) {
    problems.push(`up to ${example.maxPods} pods and callers with limits or budgets, but no REDIS_URL: each pod would count alone`);
  }
  const providerKeys = new Set<string>();
  for (const provider of Object.values(tables.providers)) {
    for (const endpoint of provider?.endpoints ?? []) {
      if (!endpoint.apiKeyEnv) continue;
      providerKeys.add(endpoint.apiKeyEnv);
      if (!has(endpoint.apiKeyEnv)) warnings.push(`provider "${provider!.id}": ${endpoint.apiKeyEnv} is not in the Secret; its models answer provider_not_configured until it is`);
    }
  }
  for (const name of secret.keys()) {
    if (keyEnvs.has(name) || providerKeys.has(name) || example.gatewayVariables.has(name) || example.readElsewhere.has(name)) continue;
    problems.push(`the Secret holds ${name}, which nothing reads (a provider or caller removed from routes.yaml?)`);
  }
  return { problems, warnings };
}
