import { describeValue, withArticle } from './arguments.js';

type Schema = Record<string, unknown>;

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

/**
 * Checks a custom tool's arguments against its JSON Schema `parameters`: required
 * properties, each property's `type` (one or a list), `enum`, and
 * `additionalProperties: false`. Enough for tool arguments; returns the problems as
 * `field: expected ...` messages, empty when the arguments fit.
 */
export function checkArguments(schema: Schema, args: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  for (const name of required) {
    if (!(name in args)) {
      const type = properties[name]?.type;
      problems.push(`${name}: required${typeof type === 'string' ? `, expected ${withArticle(type)}` : ''}`);
    }
  }
  for (const [name, value] of Object.entries(args)) {
    const prop = properties[name];
    if (!prop) {
      if (schema.additionalProperties === false) {
        problems.push(`${name}: unknown argument (allowed: ${Object.keys(properties).join(', ') || 'none'})`);
      }
      continue;
    }
    const types =
      typeof prop.type === 'string' ? [prop.type] : Array.isArray(prop.type) ? (prop.type as string[]) : [];
    if (types.length && !types.some((t) => typeMatches(t, value))) {
      problems.push(`${name}: expected ${types.map(withArticle).join(' or ')}, got ${describeValue(value)}`);
    } else if (
      Array.isArray(prop.enum) &&
      !prop.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))
    ) {
      problems.push(`${name}: expected one of ${prop.enum.map((e) => JSON.stringify(e)).join(', ')}`);
    }
  }
  return problems;
}
