import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

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

/** The directory with its content hash (cached by names, sizes, modes and mtimes). */
export function agentFiles(dir: string): AgentFiles {
  const abs = resolve(dir);
  const files = listAgentFiles(abs);
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
