import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parseSize } from '../../../shared/size.js';
import { formatBytes } from '../../../shared/format-bytes.js';

/** Where an inside agent's files are, inside the sandbox (read-only; its `bin` on PATH). */
export const AGENT_DIR = '/opt/agent';
/** The file in AGENT_DIR naming the hash of what is there (written last, so a torn copy has none). */
export const AGENT_FILES_MARK = '.stepbox-files';

/** A host directory to put read-only at /opt/agent, named by the hash of its contents. */
export interface AgentFiles {
  readonly dir: string;
  readonly hash: string;
}

/** A regular file of an agent directory, relative to it. */
export interface AgentFile {
  readonly path: string;
  readonly full: string;
  readonly mode: number;
  readonly size: number;
}

const CHUNK = 1024 * 1024;

/** Regular files under `dir`, sorted (symlinks and special files left out: /opt/agent holds copies only). */
export function listAgentFiles(dir: string): AgentFile[] {
  const out: AgentFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const st = lstatSync(full);
      if (st.isDirectory()) walk(full);
      else if (st.isFile())
        out.push({ path: relative(dir, full).split(sep).join('/'), full, mode: st.mode, size: st.size });
    }
  };
  walk(dir);
  return out;
}

const hashes = new Map<string, string>();

/** An agent folder over its cap, or a cap that is not a size: the caller says which agent (a usage error). */
export class AgentDirTooLarge extends Error {
  readonly code = 'agent_dir_too_large';
  constructor(message: string) {
    super(message);
    this.name = 'AgentDirTooLarge';
  }
}

/** The largest agent folder accepted when `STEPBOX_AGENT_DIR_MAX` does not say: 2 GiB. */
export const DEFAULT_AGENT_DIR_MAX = 2 * 1024 ** 3;

/** The cap on an agent folder's apparent size: `STEPBOX_AGENT_DIR_MAX` (a Docker size), else 2 GiB. */
export function agentDirMax(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.STEPBOX_AGENT_DIR_MAX;
  if (raw === undefined || raw === '') return DEFAULT_AGENT_DIR_MAX;
  const n = parseSize(raw);
  if (n === null || n <= 0)
    throw new AgentDirTooLarge(
      `STEPBOX_AGENT_DIR_MAX="${raw}" is not a size; give a Docker size such as "4g" or "512m"`,
    );
  return n;
}

/**
 * The directory with its content hash (cached by names, sizes, modes and mtimes). A folder
 * whose files add up (apparent size: a sparse file counts whole) to more than `max` is
 * refused before anything is read or copied, naming its largest files and the setting.
 */
export function agentFiles(dir: string, max = agentDirMax()): AgentFiles {
  const abs = resolve(dir);
  const files = listAgentFiles(abs);
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > max) {
    const biggest = [...files]
      .sort((a, b) => b.size - a.size)
      .slice(0, 3)
      .map((f) => `${f.path} ${formatBytes(f.size)}`);
    throw new AgentDirTooLarge(
      `the agent folder ${abs} holds ${formatBytes(total)}, over the ${formatBytes(max)} cap on what is copied to /opt/agent (largest: ${biggest.join(', ')}); remove what the agent does not need, or raise the cap with STEPBOX_AGENT_DIR_MAX=SIZE (e.g. 4g)`,
    );
  }
  const sig = files.map((f) => `${f.path}\0${f.size}\0${lstatSync(f.full).mtimeMs}\0${f.mode}`).join('\n');
  const key = `${abs}\n${sig}`;
  const cached = hashes.get(key);
  if (cached) return { dir: abs, hash: cached };
  const h = createHash('sha256');
  const buf = Buffer.alloc(CHUNK);
  for (const f of files) {
    h.update(`${f.path}\0${f.mode & 0o111 ? 'x' : '-'}\0${f.size}\0`);
    const fd = openSync(f.full, 'r');
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n <= 0) break;
        h.update(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }
  const hash = h.digest('hex');
  hashes.set(key, hash);
  return { dir: abs, hash };
}
