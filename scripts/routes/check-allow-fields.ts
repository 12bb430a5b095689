import { DIALECT_DEFAULTS } from '../../src/dialects/dialect-defaults.js';

type Report = (path: (string | number)[], at: 'key' | 'value', message: string) => void;

/**
 * allow_fields lists only fields the provider's dialect gates: any other name would allow nothing (a typo, or a
 * field that passes anyway) and mislead its reviewer. Reported at the item.
 */
export function checkAllowFields(path: (string | number)[], list: unknown, dialectName: unknown, report: Report): void {
  if (!Array.isArray(list)) return; // absent, or the schema reports it
  const dialect = typeof dialectName === 'string' && Object.hasOwn(DIALECT_DEFAULTS, dialectName) ? (dialectName as keyof typeof DIALECT_DEFAULTS) : 'openai';
  const gated = DIALECT_DEFAULTS[dialect].gatedFields;
  list.forEach((field: unknown, index) => {
    if (typeof field !== 'string' || gated.includes(field)) return;
    const which = gated.length > 0 ? `it gates only ${gated.join(', ')}` : 'it gates no field (every field passes as sent)';
    report([...path, index], 'value', `${JSON.stringify(field)} is not a field the ${dialect} dialect gates: ${which}`);
  });
}
