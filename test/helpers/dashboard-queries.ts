// The PromQL of deploy/grafana/gateway-dashboard.json and deploy/prometheus/alerts.yaml, as tests read it: each
// query with Grafana's variables substituted, and the metric and label names it reads.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const DASHBOARD_URL = new URL('../../deploy/grafana/gateway-dashboard.json', import.meta.url);
const ALERTS_URL = new URL('../../deploy/prometheus/alerts.yaml', import.meta.url);

export interface GrafanaTarget {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}
export interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: GrafanaTarget[];
  panels?: GrafanaPanel[];
}
export interface GrafanaVariable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { type?: string; uid?: string };
  allValue?: string;
  includeAll?: boolean;
}
export interface Dashboard {
  schemaVersion: number;
  uid: string;
  title: string;
  panels: GrafanaPanel[];
  templating: { list: GrafanaVariable[] };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_URL, 'utf8')) as Dashboard;
}

/** Every panel, those inside collapsed rows too. */
export function allPanels(dashboard: Dashboard): GrafanaPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/**
 * Each query of each panel, with the dashboard's variables as "All" (`.*`) and Grafana's intervals as a test
 * with a 1 s scrape can answer ($__rate_interval: 4 scrapes at least, as Grafana takes it; $__range: the test's run).
 */
export function dashboardQueries(dashboard: Dashboard): { name: string; expr: string }[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ name: `panel ${panel.id} "${panel.title}" ${target.refId}`, expr: substitute(target.expr) })),
  );
}

export function substitute(expr: string): string {
  return expr
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__range', '10m')
    .replace(/\$(instance|model|provider|caller)\b/g, '.*');
}

/** label_values(metric, label) of each query variable. */
export function variableQueries(dashboard: Dashboard): { name: string; metric: string; label: string }[] {
  return dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
      const match = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(query);
      if (!match) throw new Error(`variable ${variable.name}: not label_values(metric, label): ${query}`);
      return { name: variable.name, metric: match[1]!, label: match[2]! };
    });
}

export interface AlertRule {
  alert: string;
  expr: string;
}

export function alertRules(): AlertRule[] {
  const file = parse(readFileSync(ALERTS_URL, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return file.groups.flatMap((group) => group.rules);
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/** The metric names a query reads: identifiers that are neither functions, keywords, label names nor durations. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = [...bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()/g)].map((match) => match[1]!).filter((name) => !KEYWORDS.has(name.toLowerCase()));
  return [...new Set(names)];
}

/** The label names a query matches on or groups by ({…} matchers, by/without/on/ignoring lists). */
export function labelNames(expr: string): string[] {
  const noStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const inMatchers = [...noStrings.matchAll(/\{([^}]*)\}/g)].flatMap((match) => [...match[1]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((each) => each[1]!));
  const inLists = [...noStrings.matchAll(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)].flatMap((match) => match[1]!.split(',').map((name) => name.trim()).filter(Boolean));
  return [...new Set([...inMatchers, ...inLists])];
}
