/** A tool in OpenAI's tool format, as sent to a model and used in exports. */
export interface OpenAiTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Record<string, unknown>;
  };
}

/**
 * The built-in tools: name → description for the model and the JSON Schema of the
 * arguments — the one definition the model sees and every call is validated against.
 */
export const BUILTIN_TOOLS = {
  execute_shell: {
    description:
      'Run a shell command line in the sandbox (bash, cwd and exported variables persist between calls, stdin is /dev/null). Returns exit_code, stdout and stderr.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'The command line to run.' },
        timeout: {
          type: 'number',
          exclusiveMinimum: 0,
          description: 'Seconds before the command is killed.',
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  read_file: {
    description: 'Read a file. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1 },
        encoding: { type: 'string', enum: ['utf8', 'base64'] },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  write_file: {
    description: 'Write a file, creating parent directories. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1 },
        content: { type: 'string' },
        encoding: { type: 'string', enum: ['utf8', 'base64'] },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  list_dir: {
    description: 'List a directory: entries {name, type, size}. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  memory_read: {
    description: "Read a key of the agent's memory.",
    parameters: {
      type: 'object',
      properties: { key: { type: 'string', minLength: 1 } },
      required: ['key'],
      additionalProperties: false,
    },
  },
  memory_write: {
    description: "Write a key of the agent's memory (any JSON value).",
    parameters: {
      type: 'object',
      properties: { key: { type: 'string', minLength: 1 }, value: {} },
      required: ['key', 'value'],
      additionalProperties: false,
    },
  },
} as const;

/** The name of a built-in tool. */
export type BuiltinToolName = keyof typeof BUILTIN_TOOLS;

/** True when `name` is a built-in tool. */
export function isBuiltinTool(name: string): name is BuiltinToolName {
  return Object.prototype.hasOwnProperty.call(BUILTIN_TOOLS, name);
}

/** The OpenAI tool definition of a built-in tool. */
export function builtinToolDefinition(name: BuiltinToolName): OpenAiTool {
  const t = BUILTIN_TOOLS[name];
  return { type: 'function', function: { name, description: t.description, parameters: t.parameters } };
}
