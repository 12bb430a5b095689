import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The folder holding every JSON Schema: the one source for validation and for types. */
export const schemasDir = fileURLToPath(new URL('../schemas/', import.meta.url));

export function schemaFiles(): string[] {
  return readdirSync(schemasDir).filter((name) => name.endsWith('.schema.json')).sort();
}

export function readSchema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, `file://${schemasDir}`), 'utf8')) as Record<string, unknown>;
}
