// deploy/grafana/gateway-dashboard.json has what Grafana 10+ needs to import it and what ops need to use it: a
// schema version, unique panel ids on a grid that does not overlap, a data source variable every panel and query
// uses, and model, provider and caller variables. test/process/dashboard-alerts-process.test.ts runs its queries
// against a real Prometheus scraping a real gateway.
import t from 'tap';
import { allPanels, readDashboard, variableQueries } from '../helpers/dashboard-queries.js';

const dashboard = readDashboard();
const DATASOURCE = '${datasource}';

t.test('importable: a schema version Grafana 10 writes, a uid and title, no id of another Grafana', async (t) => {
  t.ok(dashboard.schemaVersion >= 36, `schemaVersion ${dashboard.schemaVersion}`);
  t.match(dashboard.uid, /^[a-zA-Z0-9_-]{1,40}$/);
  t.ok(dashboard.title);
  t.equal((dashboard as unknown as { id: unknown }).id, null, 'id null: Grafana assigns its own on import');
});

t.test('panel ids are unique integers, and panels do not overlap on the 24-column grid', async (t) => {
  const panels = allPanels(dashboard);
  const ids = panels.map((panel) => panel.id);
  t.ok(ids.every((id) => Number.isInteger(id) && id > 0));
  t.equal(new Set(ids).size, ids.length, 'unique ids');
  const cells = new Map<string, string>();
  for (const panel of dashboard.panels) {
    const { x, y, w, h } = panel.gridPos;
    t.ok(x >= 0 && w > 0 && x + w <= 24 && h > 0, `${panel.title}: inside the grid`);
    for (let row = y; row < y + h; row++) {
      for (let column = x; column < x + w; column++) {
        const taken = cells.get(`${row}:${column}`);
        if (taken) t.fail(`${panel.title} overlaps ${taken}`);
        cells.set(`${row}:${column}`, panel.title);
      }
    }
  }
});

t.test('a Prometheus data source variable, and every panel and query on it', async (t) => {
  const variable = dashboard.templating.list.find((each) => each.name === 'datasource');
  t.equal(variable?.type, 'datasource');
  t.equal(variable?.query, 'prometheus');
  const panels = allPanels(dashboard).filter((panel) => panel.type !== 'row');
  t.ok(panels.length >= 20, `${panels.length} panels`);
  for (const panel of panels) {
    t.same(panel.datasource, { type: 'prometheus', uid: DATASOURCE }, `${panel.title}: datasource`);
    t.ok((panel.targets ?? []).length > 0, `${panel.title}: has a query`);
    for (const target of panel.targets ?? []) t.same(target.datasource, { type: 'prometheus', uid: DATASOURCE }, `${panel.title} ${target.refId}: datasource`);
  }
  for (const row of allPanels(dashboard).filter((panel) => panel.type === 'row')) t.notOk(row.targets, `row ${row.title} holds no query`);
});

t.test('model, provider and caller variables (and instance) from label_values, multi-select with All as .*', async (t) => {
  const variables = variableQueries(dashboard);
  t.same(
    variables.map((each) => each.name),
    ['instance', 'model', 'provider', 'caller'],
  );
  t.same(variables.find((each) => each.name === 'caller'), { name: 'caller', metric: 'gateway_requests_total', label: 'caller' });
  for (const variable of dashboard.templating.list.filter((each) => each.type === 'query')) {
    t.same(variable.datasource, { type: 'prometheus', uid: DATASOURCE }, `${variable.name}: datasource`);
    // .* also matches the empty label value (a request refused before routing, or without a key).
    t.equal(variable.allValue, '.*', `${variable.name}: All matches empty values too`);
    t.equal(variable.includeAll, true);
  }
  // Each variable is used: a variable no query reads filters nothing.
  const queries = allPanels(dashboard).flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
  for (const variable of variables) t.ok(queries.some((expr) => expr.includes(`"$${variable.name}"`)), `$${variable.name} is used`);
});
