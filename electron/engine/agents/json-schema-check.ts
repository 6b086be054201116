/**
 * A small JSON-Schema checker for tool arguments: the subset tool definitions use
 * (type, properties, required, additionalProperties: false, enum, items). It returns
 * every problem as a sentence the agent can act on, so a parse-error observation says
 * exactly what was wrong.
 */
export function checkJsonSchema(schema: unknown, value: unknown, path = 'arguments'): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  const problems: string[] = [];
  const type = s.type;
  if (typeof type === 'string' || Array.isArray(type)) {
    const types = (Array.isArray(type) ? type : [type]) as string[];
    if (!types.some((t) => hasType(value, t))) {
      return [`${path} must be ${types.join(' or ')}, got ${describe(value)}`];
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${path} must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const key of (s.required ?? []) as string[]) {
      if (!(key in obj)) problems.push(`${path}.${key} is required`);
    }
    for (const [key, v] of Object.entries(obj)) {
      if (key in props) problems.push(...checkJsonSchema(props[key], v, `${path}.${key}`));
      else if (s.additionalProperties === false) {
        const allowed = Object.keys(props);
        problems.push(
          `${path}.${key} is not an accepted argument (accepted: ${allowed.length ? allowed.join(', ') : 'none'})`,
        );
      }
    }
  }
  if (Array.isArray(value) && s.items) {
    value.forEach((v, i) => problems.push(...checkJsonSchema(s.items, v, `${path}[${i}]`)));
  }
  return problems;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return true;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value} (${JSON.stringify(value)?.slice(0, 40)})`;
}
