/**
 * The one validator of tool arguments: a JSON Schema (the tool's OpenAI `parameters`)
 * compiled with ajv, a maintained full implementation, so every keyword a task writes
 * (`minimum`, `pattern`, `enum`, `minLength`, `items`, `oneOf`, …) is enforced. The model
 * parser and the tool registry both call it, so one bad call gets one message, whichever
 * path found it: parts that name the field and what it takes, joined by `; `
 * (`"command" is missing: give it a string`). A person reads them too (the held-step editor
 * shows a refused edit): plain words, no schema keywords.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { didYouMean } from '../../../shared/did-you-mean.js';
import { err, ok, type Result } from '../../../shared/result.js';
import { describeValue, withArticle } from './arguments.js';

/** Checks one call's arguments (already an object); the value on success is the arguments. */
export type ArgumentCheck = (args: Record<string, unknown>) => Result<Record<string, unknown>, string>;

/** A schema ajv cannot compile: the task that declares it is invalid. */
export class SchemaError extends Error {
  readonly code = 'invalid_task';
  override readonly name = 'SchemaError';
}

// strict: false — tool schemas carry `description` and vendor keys next to the standard ones.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
const compiled = new Map<string, ArgumentCheck>();

/**
 * The check for a tool's `parameters`, compiled once per distinct schema (a task's tools
 * are compiled when its registry is built; the parser then finds them here). Throws
 * {@link SchemaError} for a schema that is not valid JSON Schema.
 */
export function argumentCheck(toolName: string, schema: Record<string, unknown>): ArgumentCheck {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) return known;
  let validate: ValidateFunction;
  // Agents inside the sandbox send their own schemas, often declaring draft 2020-12; the
  // keywords tool schemas use read the same in the draft ajv knows.
  const { $schema: _declared, ...body } = schema;
  try {
    validate = ajv.compile(body);
  } catch (e) {
    throw new SchemaError(
      `tool "${toolName}": its parameters are not a valid JSON Schema (${(e as Error).message})`,
    );
  }
  const allowed = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const check: ArgumentCheck = (args) =>
    validate(args) ? ok(args) : err(describeErrors(validate.errors ?? [], args, schema, allowed));
  compiled.set(key, check);
  return check;
}

/** `command`, `items[2].name`: where in the arguments an error is. */
function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
  return path || 'arguments';
}

/** The value at an error's path, for "got …". */
function valueAt(args: unknown, instancePath: string): unknown {
  let v: unknown = args;
  for (const p of instancePath.split('/').slice(1)) v = (v as Record<string, unknown> | undefined)?.[p];
  return v;
}

type SchemaObject = Record<string, unknown>;

/** The sub-schema that applies at an instance path (through `properties` and `items`). */
function schemaAt(schema: SchemaObject, instancePath: string): SchemaObject {
  let s: SchemaObject | undefined = schema;
  for (const p of instancePath.split('/').slice(1))
    s = /^\d+$/.test(p)
      ? (s?.items as SchemaObject | undefined)
      : (s?.properties as Record<string, SchemaObject> | undefined)?.[p];
  return s ?? {};
}

/** The declared properties of the object at an instance path. */
function propertiesAt(schema: SchemaObject, instancePath: string): Record<string, SchemaObject> {
  return (schemaAt(schema, instancePath).properties ?? {}) as Record<string, SchemaObject>;
}

function describeErrors(
  errors: readonly ErrorObject[],
  args: Record<string, unknown>,
  schema: Record<string, unknown>,
  allowed: readonly string[],
): string {
  const parts: string[] = [];
  for (const e of errors) {
    const field = fieldOf(e);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required': {
        const name = String(p.missingProperty);
        const inner = e.instancePath ? `${field}.${name}` : name;
        const type = propertiesAt(schema, e.instancePath)[name]?.type;
        parts.push(
          `"${inner}" is missing: give it ${typeof type === 'string' ? withArticle(type) : 'a value'}`,
        );
        break;
      }
      case 'additionalProperties': {
        const name = String(p.additionalProperty);
        const inner = e.instancePath ? `${field}.${name}` : name;
        const guess = e.instancePath ? null : didYouMean(name, allowed);
        const accepted = e.instancePath ? Object.keys(propertiesAt(schema, e.instancePath)) : allowed;
        const takes = accepted.length ? `it takes ${accepted.join(', ')}` : 'it takes none';
        parts.push(`"${inner}" is not an argument${guess ? ` — did you mean "${guess}"?` : ''} (${takes})`);
        break;
      }
      case 'type': {
        const types = (Array.isArray(p.type) ? p.type : String(p.type).split(',')) as string[];
        parts.push(
          `"${field}" must be ${types.map(withArticle).join(' or ')}, not ${describeValue(valueAt(args, e.instancePath))}`,
        );
        break;
      }
      case 'enum':
        parts.push(
          `"${field}" must be one of ${((p.allowedValues ?? []) as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
        );
        break;
      case 'const':
        parts.push(`"${field}" must be ${JSON.stringify(p.allowedValue)}`);
        break;
      case 'minLength':
        parts.push(
          p.limit === 1
            ? `"${field}" must not be empty`
            : `"${field}" must be at least ${p.limit} characters`,
        );
        break;
      case 'maxLength':
        parts.push(`"${field}" must be at most ${p.limit} characters`);
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum': {
        const bound = {
          minimum: 'at least',
          maximum: 'at most',
          exclusiveMinimum: 'more than',
          exclusiveMaximum: 'less than',
        }[e.keyword];
        parts.push(`"${field}" must be ${bound} ${p.limit}`);
        break;
      }
      case 'multipleOf':
        parts.push(`"${field}" must be a multiple of ${p.multipleOf}`);
        break;
      case 'pattern':
        parts.push(`"${field}" must match the pattern ${p.pattern}`);
        break;
      case 'minItems':
      case 'maxItems':
        parts.push(
          `"${field}" must have ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${p.limit} items`,
        );
        break;
      case 'uniqueItems':
        parts.push(`"${field}" must not hold the same item twice`);
        break;
      case 'oneOf':
      case 'anyOf':
        parts.push(`"${field}" does not fit any form it may take`);
        break;
      default:
        parts.push(`"${field}" ${e.message ?? `fails ${e.keyword}`}`);
    }
  }
  return [...new Set(parts)].join('; ');
}
