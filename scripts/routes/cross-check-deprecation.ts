type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/** Midnight UTC of a YYYY-MM-DD date, or null when it is not a real calendar date (2026-02-30). */
export function dateMs(date: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return null;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(ms).toISOString().startsWith(date) ? ms : null;
}

/**
 * deprecated: real dates, sunset after since, and a replacement callers can actually move to
 * (on the roster, not the model itself, not deprecated in turn: a chain would send callers through two moves).
 */
export function checkDeprecations(models: Record<string, unknown>, report: Report): void {
  const deprecationOf = (model: string): Record<string, unknown> | null => {
    const entry = models[model];
    const value = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)['deprecated'] : undefined;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  };
  for (const model of Object.keys(models)) {
    const deprecated = deprecationOf(model);
    if (!deprecated) continue;
    const path = ['models', model, 'deprecated'];
    const dates: Record<string, number | null> = {};
    for (const key of ['since', 'sunset']) {
      const value = deprecated[key];
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) continue; // the schema reports it
      dates[key] = dateMs(value);
      if (dates[key] === null) report([...path, key], 'value', `${JSON.stringify(value)} is not a calendar date`);
    }
    if (typeof dates['since'] === 'number' && typeof dates['sunset'] === 'number' && dates['sunset'] <= dates['since']) {
      report([...path, 'sunset'], 'value', `must be after since (${String(deprecated['since'])})`);
    }
    const replacement = deprecated['replacement'];
    if (typeof replacement !== 'string') continue;
    if (replacement === model) report([...path, 'replacement'], 'value', 'a model cannot replace itself');
    else if (!Object.hasOwn(models, replacement)) report([...path, 'replacement'], 'value', `${JSON.stringify(replacement)} is not on the roster`);
    else if (deprecationOf(replacement)) report([...path, 'replacement'], 'value', `${JSON.stringify(replacement)} is deprecated too; name a model callers can stay on`);
  }
}
