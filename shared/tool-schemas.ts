import { z } from 'zod';

/** A tool in OpenAI's tool format, as sent to a model and used in exports. */
export interface OpenAiTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Record<string, unknown>;
  };
}

/** Arguments of `execute_shell`. */
export const ExecuteShellArgs = z.strictObject({
  command: z.string().min(1, 'command must not be empty'),
  timeout: z.number().positive().optional(),
});
/** Arguments of `read_file`. */
export const ReadFileArgs = z.strictObject({
  path: z.string().min(1),
  encoding: z.enum(['utf8', 'base64']).optional(),
});
/** Arguments of `write_file`. */
export const WriteFileArgs = z.strictObject({
  path: z.string().min(1),
  content: z.string(),
  encoding: z.enum(['utf8', 'base64']).optional(),
});
/** Arguments of `list_dir`. */
export const ListDirArgs = z.strictObject({ path: z.string().min(1) });
/** Arguments of `memory_read`. */
export const MemoryReadArgs = z.strictObject({ key: z.string().min(1) });
/** Arguments of `memory_write`. */
export const MemoryWriteArgs = z.strictObject({ key: z.string().min(1), value: z.unknown() });

/** The built-in tools: name → zod schema of the arguments and a description for the model. */
export const BUILTIN_TOOLS = {
  execute_shell: {
    args: ExecuteShellArgs,
    description:
      'Run a shell command line in the sandbox (bash, cwd and exported variables persist between calls, stdin is /dev/null). Returns exit_code, stdout and stderr.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line to run.' },
        timeout: { type: 'number', description: 'Seconds before the command is killed.' },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  read_file: {
    args: ReadFileArgs,
    description: 'Read a file. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        encoding: { type: 'string', enum: ['utf8', 'base64'] },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  write_file: {
    args: WriteFileArgs,
    description: 'Write a file, creating parent directories. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        content: { type: 'string' },
        encoding: { type: 'string', enum: ['utf8', 'base64'] },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  list_dir: {
    args: ListDirArgs,
    description: 'List a directory: entries {name, type, size}. Relative paths resolve against /workspace.',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  memory_read: {
    args: MemoryReadArgs,
    description: "Read a key of the agent's memory.",
    parameters: {
      type: 'object',
      properties: { key: { type: 'string' } },
      required: ['key'],
      additionalProperties: false,
    },
  },
  memory_write: {
    args: MemoryWriteArgs,
    description: "Write a key of the agent's memory (any JSON value).",
    parameters: {
      type: 'object',
      properties: { key: { type: 'string' }, value: {} },
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
