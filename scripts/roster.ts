// `npm run --silent roster [-- --caller NAME] [--json] [FILE]`: the routing strings routes.yaml (or FILE) serves,
// one per line, for a chat UI's or IDE plugin's static model list (the gateway has no model-list endpoint, by
// design). --caller NAME: only those that caller may use (its `models:`, `*` patterns expanded); --json: an array
// with each string's provider, kind and deprecation.
import { parseArgs } from 'node:util';
import { compileRoutesFileOrExit } from './routes-file.js';

const USAGE = 'usage: npm run --silent roster -- [--caller NAME] [--json] [routes.yaml]\n';

let parsed: ReturnType<typeof parseOptions>;
try {
  parsed = parseOptions();
} catch (error) {
  process.stderr.write(`roster: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (positionals.length > 1) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const { fileName, tables } = compileRoutesFileOrExit(positionals[0]);
let models = Object.keys(tables.models).sort();
if (values.caller !== undefined) {
  const caller = Object.hasOwn(tables.callers, values.caller) ? tables.callers[values.caller] : undefined;
  if (!caller) {
    const known = Object.keys(tables.callers);
    process.stderr.write(`roster: ${fileName} has no caller ${JSON.stringify(values.caller)}${known.length > 0 ? ` (its callers: ${known.join(', ')})` : ' (it declares no callers)'}\n`);
    process.exit(2);
  }
  const allowed = new Set(caller.models);
  models = models.filter((model) => allowed.has(model));
}
if (values.json) {
  const rows = models.map((model) => {
    const route = tables.models[model]!;
    return { model, provider: route.provider, kind: route.kind ?? 'chat', deprecated: route.deprecated };
  });
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  process.stdout.write(models.map((model) => `${model}\n`).join(''));
}

function parseOptions() {
  return parseArgs({ options: { caller: { type: 'string' }, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
}
