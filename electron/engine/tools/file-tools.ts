import { performance } from 'node:perf_hooks';
import { parseSize } from '../../../shared/size.js';
import { toolFailure, type DirEntry, type ToolResult } from '../../../shared/tool-result.js';
import { builtinToolDefinition } from '../../../shared/tool-schemas.js';
import { resolveToolPath } from './paths.js';
import { workdirOf } from '../../../shared/workdir.js';
import { runOf, withTimeout, type ToolExecutor } from './tool-executor.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function timedOut(name: string, ms: number, start: number): () => ToolResult {
  return () =>
    toolFailure('timeout', `${name} did not finish within ${ms / 1000}s`, performance.now() - start);
}

const lenient = new TextDecoder('utf-8');

/** Caps text at the task's per-stream output limit in bytes, like the shell's output, never splitting a character. */
function capped(text: string, limit: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= limit) return { text, truncated: false };
  return { text: lenient.decode(bytes.subarray(0, limit)).replace(/\uFFFD$/, ''), truncated: true };
}

/** `read_file {path, encoding?}`: UTF-8 text, or base64 on request; binary without it is `binary_file`. */
export function readFileTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'read_file',
    definition: builtinToolDefinition('read_file'),
    timeoutMs,
    async run(args, ctx, effectiveMs) {
      const { path, encoding } = args as { path: string; encoding?: 'utf8' | 'base64' };
      const abs = resolveToolPath(path, workdirOf(ctx.task.sandbox));
      const start = performance.now();
      const read = async (): Promise<ToolResult> => {
        const res = await ctx.sandbox.readFile(abs);
        const ms = performance.now() - start;
        if (!res.ok) return toolFailure(res.error.code, res.error.message, ms);
        const bytes = res.value;
        let text: string;
        if (encoding === 'base64') {
          text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
        } else {
          try {
            text = utf8.decode(bytes);
          } catch {
            return toolFailure(
              'binary_file',
              `${abs} is not UTF-8 text (${bytes.byteLength} bytes); call read_file again with "encoding": "base64" to get its bytes as base64`,
              ms,
            );
          }
        }
        const limit = parseSize(ctx.task.sandbox.limits.output) ?? Infinity;
        const out = capped(text, limit);
        return {
          ok: true,
          stdout: out.text,
          ...(out.truncated ? { truncated: { stdout: true, stderr: false } } : {}),
          data: { path: abs, size: bytes.byteLength, encoding: encoding ?? 'utf8' },
          duration_ms: ms,
          bytes: bytes.byteLength,
        };
      };
      return runOf(await withTimeout(read(), effectiveMs, timedOut('read_file', effectiveMs, start)));
    },
  };
}

/** `write_file {path, content, encoding?}`: writes text or base64-decoded bytes, creating parent directories. */
export function writeFileTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'write_file',
    definition: builtinToolDefinition('write_file'),
    timeoutMs,
    async run(args, ctx, effectiveMs) {
      const { path, content, encoding } = args as {
        path: string;
        content: string;
        encoding?: 'utf8' | 'base64';
      };
      const abs = resolveToolPath(path, workdirOf(ctx.task.sandbox));
      const start = performance.now();
      if (encoding === 'base64' && !BASE64.test(content.replace(/\s+/g, ''))) {
        return runOf(
          toolFailure(
            'invalid_arguments',
            'content: expected base64 (A-Z, a-z, 0-9, +, /, =) because encoding is "base64"',
          ),
        );
      }
      const bytes = encoding === 'base64' ? Buffer.from(content, 'base64') : Buffer.from(content, 'utf8');
      const write = async (): Promise<ToolResult> => {
        const res = await ctx.sandbox.writeFile(abs, bytes);
        const ms = performance.now() - start;
        if (!res.ok) return toolFailure(res.error.code, res.error.message, ms);
        return {
          ok: true,
          stdout: `wrote ${res.value.bytes} bytes to ${abs}`,
          data: { path: abs, bytes: res.value.bytes },
          duration_ms: ms,
          bytes: res.value.bytes,
        };
      };
      return runOf(await withTimeout(write(), effectiveMs, timedOut('write_file', effectiveMs, start)));
    },
  };
}

/** One `list_dir` line: type, size and name (dirs end in `/`). */
function listingLine(e: DirEntry): string {
  return `${e.type.padEnd(7)} ${String(e.size).padStart(10)}  ${e.name}${e.type === 'dir' ? '/' : ''}`;
}

/** `list_dir {path}`: `data.entries` `[{name, type, size}]` sorted by name, and a readable listing. */
export function listDirTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'list_dir',
    definition: builtinToolDefinition('list_dir'),
    timeoutMs,
    async run(args, ctx, effectiveMs) {
      const abs = resolveToolPath((args as { path: string }).path, workdirOf(ctx.task.sandbox));
      const start = performance.now();
      const list = async (): Promise<ToolResult> => {
        const res = await ctx.sandbox.listDir(abs);
        const ms = performance.now() - start;
        if (!res.ok) return toolFailure(res.error.code, res.error.message, ms);
        const entries = [...res.value].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const stdout = entries.length ? entries.map(listingLine).join('\n') + '\n' : `(${abs} is empty)\n`;
        return {
          ok: true,
          stdout,
          data: { path: abs, entries },
          duration_ms: ms,
          bytes: Buffer.byteLength(stdout),
        };
      };
      return runOf(await withTimeout(list(), effectiveMs, timedOut('list_dir', effectiveMs, start)));
    },
  };
}
