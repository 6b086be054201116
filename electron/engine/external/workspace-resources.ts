import { posix } from 'node:path';
import type { Result } from '../../../shared/result.js';
import type { ToolError } from '../../../shared/errors.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import { WORKSPACE } from '../tools/paths.js';

/** The scheme and root of the workspace's files as MCP resources. */
export const WORKSPACE_URI = 'file:///workspace/';
/** The one resource template: any workspace file by its path (`{path}` may hold `/`, encoded or not). */
export const WORKSPACE_TEMPLATE = `${WORKSPACE_URI}{path}`;
/** A listing stops here: a workspace of more files lists the first ones (by walk order). */
export const MAX_LISTED_FILES = 10_000;
/** Deeper directories are not walked (a hostile tree of nested dirs cannot keep the walk going). */
const MAX_DEPTH = 32;

/** One workspace file: its path under /workspace and size. */
export interface WorkspaceFile {
  readonly path: string;
  readonly size: number;
}

/**
 * The workspace as MCP resources see it: read inside the sandbox (never the host's files),
 * through the sandbox's own file operations, as the read_file and list_dir tools do.
 */
export interface WorkspaceResources {
  /** Every file under /workspace (relative paths, sorted), at most {@link MAX_LISTED_FILES}. */
  list(): Promise<WorkspaceFile[]>;
  /** A file's bytes by its path under /workspace. */
  read(path: string): Promise<Result<Uint8Array, ToolError>>;
}

/**
 * The workspace resources of the episode's sandbox (asked for at each use: the agent's
 * server starts before a step names it): a breadth-first walk of list_dir, reads by
 * read_file's operation. Without a sandbox there is nothing to list or read.
 */
export function sandboxResources(current: () => Sandbox | undefined): WorkspaceResources {
  return {
    async list() {
      const sandbox = current();
      if (!sandbox) return [];
      const files: WorkspaceFile[] = [];
      let level = [''];
      for (let depth = 0; depth < MAX_DEPTH && level.length > 0; depth++) {
        const next: string[] = [];
        for (const dir of level) {
          const res = await sandbox.listDir(posix.join(WORKSPACE, dir));
          if (!res.ok) continue; // a directory removed or unreadable meanwhile is left out
          for (const e of res.value) {
            const rel = dir ? `${dir}/${e.name}` : e.name;
            if (e.type === 'dir') next.push(rel);
            else if (e.type === 'file') files.push({ path: rel, size: e.size });
            if (files.length >= MAX_LISTED_FILES) return sorted(files);
          }
        }
        level = next;
      }
      return sorted(files);
    },
    async read(path) {
      const sandbox = current();
      if (!sandbox)
        return {
          ok: false,
          error: { code: 'not_found', message: 'the episode has no sandbox to read from' },
        };
      return sandbox.readFile(posix.join(WORKSPACE, path));
    },
  };
}

function sorted(files: WorkspaceFile[]): WorkspaceFile[] {
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The resource URI of a workspace path (`src/a b.ts` → `file:///workspace/src/a%20b.ts`). */
export function workspaceUri(path: string): string {
  const rel = path.startsWith(`${WORKSPACE}/`) ? path.slice(WORKSPACE.length + 1) : path;
  return WORKSPACE_URI + rel.split('/').map(encodeURIComponent).join('/');
}

/**
 * The path under /workspace a resource URI names, or null when it names nothing there
 * (another scheme, `..` out of the workspace, bad percent-encoding): such a URI is "not
 * found", never read.
 */
export function workspacePath(uri: string): string | null {
  if (!uri.startsWith(WORKSPACE_URI)) return null;
  let rel: string;
  try {
    rel = decodeURIComponent(uri.slice(WORKSPACE_URI.length).split(/[?#]/)[0]);
  } catch {
    return null;
  }
  if (rel.includes('\0')) return null;
  const abs = posix.resolve(WORKSPACE, rel);
  if (!abs.startsWith(`${WORKSPACE}/`)) return null;
  return abs.slice(WORKSPACE.length + 1);
}

const MIME: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  md: 'text/markdown',
  json: 'application/json',
  js: 'text/javascript',
  mjs: 'text/javascript',
  ts: 'text/x-typescript',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  html: 'text/html',
  css: 'text/css',
  csv: 'text/csv',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
};

/** A file's MIME type by its extension; unknown ones are text/plain or application/octet-stream by content. */
export function mimeTypeOf(path: string, text: boolean): string {
  const ext = posix.extname(path).slice(1).toLowerCase();
  return MIME[ext] ?? (text ? 'text/plain' : 'application/octet-stream');
}
