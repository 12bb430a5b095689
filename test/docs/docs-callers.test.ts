// The two-caller example of docs/callers.md, added to the shipped routes.yaml exactly as printed: it compiles, and each caller
// reaches only its models, within its limits.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse, parseDocument } from 'yaml';
import { envelopeOf, startGateway } from '../helpers/gateway.js';
import { HI, bearer, startUsageMock } from '../helpers/callers-routes.js';

// The page's first yaml block is the example.
const page = readFileSync(new URL('../../docs/callers.md', import.meta.url), 'utf8');
const example = /```yaml\n([\s\S]*?)```/.exec(page)![1]!;

/** The shipped routes.yaml with the example's callers section added and its prices set on the roster's entries. */
function shippedWithExample(): string {
  const doc = parseDocument(readFileSync(new URL('../../routes.yaml', import.meta.url), 'utf8'));
  const added = parse(example) as { models: Record<string, { price: unknown }>; callers: unknown };
  for (const [model, entry] of Object.entries(added.models)) {
    if (!doc.hasIn(['models', model])) throw new Error(`${model} is not on the shipped roster`);
    doc.setIn(['models', model], doc.createNode({ ...((doc.getIn(['models', model]) as { toJSON(): object } | null)?.toJSON() ?? {}), price: entry.price }));
  }
  doc.set('callers', doc.createNode(added.callers));
  return String(doc);
}

t.test("the two callers of docs/callers.md work as written", async (t) => {
  const mock = await startUsageMock({ prompt: 1000, completion: 100 });
  t.teardown(() => mock.upstream.close());
  const gateway = await startGateway({
    routes: shippedWithExample(),
    env: { GATEWAY_OPENAI_BASE_URL: `${mock.upstream.origin}/v1`, OPENAI_API_KEY: 'sk-provider', BATCH_TEAM_KEYS: 'batch-key-1,batch-key-2' },
  });
  t.teardown(() => gateway.close());

  const search = await gateway.post({ model: 'openai/gpt-4.1-mini', messages: HI }, bearer('test'));
  t.equal(search.status, 200, 'search-team, with the key whose digest the example lists');
  t.equal(search.headers.get('x-ratelimit-limit-requests'), '600');
  t.equal(search.headers.get('x-ratelimit-limit-tokens'), '200000');
  const searchNano = await gateway.post({ model: 'openai/gpt-4.1-nano', messages: HI }, bearer('test'));
  t.equal(searchNano.status, 403, 'not among search-team models');
  t.equal((await envelopeOf(searchNano))['gateway_code'], 'model_not_allowed');

  t.equal((await gateway.post({ model: 'openai/gpt-4.1-nano', messages: HI }, bearer('batch-key-2'))).status, 200, 'batch-team, a key from BATCH_TEAM_KEYS');
  const batchClaude = await gateway.post({ model: 'anthropic/claude-haiku-4-5', messages: HI }, bearer('batch-key-1'));
  t.equal(batchClaude.status, 403, 'batch-team may not use anthropic models');
  t.equal((await gateway.post({ model: 'openai/gpt-4.1-mini', messages: HI }, bearer('other'))).status, 401);

  const logs = gateway.requestLogs();
  t.strictSame(logs.map((line) => line['caller']), ['search-team', 'search-team', 'batch-team', 'batch-team', null]);
  // 1000 prompt and 100 completion tokens: gpt-4.1-mini 0.0004 + 0.00016, gpt-4.1-nano 0.0001 + 0.00004.
  t.strictSame(logs.map((line) => line['cost_usd']), [0.00056, null, 0.00014, null, null]);
  t.equal(mock.answered(), 2);
});
