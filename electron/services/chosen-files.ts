import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { ChosenFile, type ChosenField } from '../../shared/contract/models.js';
import { grantsFor } from '../../shared/start-paths.js';
import { logger } from '../engine/log.js';
import { writeStoreFile } from './store-file.js';

const log = logger('chosen-files');

/** The most grants kept; the oldest go first (a person picks a few files, not hundreds). */
const MAX_GRANTS = 200;

/** An absolute path without a NUL: what a grant's paths must be. */
const HostPath = z.string().refine((p) => isAbsolute(p) && !p.includes('\0'));

/** A grant as kept: what the window sees, plus the real path it was chosen as and its seal. */
const KeptGrant = ChosenFile.extend({
  task: HostPath,
  path: HostPath,
  /** The real path when chosen: a use reads it only while the path still resolves there. */
  real: HostPath,
  /** HMAC-SHA256 of the rest under the store's key: only Choose… writes one that verifies. */
  seal: z.string(),
});
/** A grant as kept in `chosen-files.json`. */
export type KeptGrant = z.infer<typeof KeptGrant>;

/**
 * The grants Choose… → Your folders made (file-fields.ts decides them; this keeps them), in the
 * store beside `projects.json` so they outlive a restart of the app or server and a reload of
 * the window: `chosen-files.json` (0600), each entry sealed with a key of its own in
 * `chosen-files.key` (0600, made on the first grant). An entry that does not verify — written
 * by hand, copied from another store, left by an unpacked bundle, or the key gone — is no grant:
 * it is dropped when read, and said in the log. Whoever can read the key as you can do more
 * than this anyway; the seal keeps anything that only writes into the store from widening what
 * stepbox reads.
 */
export class ChosenFiles {
  private grants: KeptGrant[];
  private key: Buffer | null;

  constructor(
    /** The store's folder; absent (fakes), the grants live in memory only. */
    private readonly storeHome: string | undefined,
  ) {
    this.key = this.readKey();
    this.grants = this.read();
  }

  /** Every grant in effect, newest last, as the window lists them (no seal, no real path). */
  list(): ChosenFile[] {
    return this.grants.map(shown);
  }

  /** The grants for `field` on starts of the task in `taskFolder` (null: none). */
  for(field: ChosenField, taskFolder: string | null): readonly KeptGrant[] {
    return grantsFor(this.grants, field, taskFolder);
  }

  /** Records a grant (the same file for the same field and task is chosen anew, not twice). */
  async add(grant: Omit<KeptGrant, 'seal' | 'chosen_at'>, now = Date.now()): Promise<ChosenFile> {
    const sealed = { ...grant, chosen_at: now, seal: '' };
    const kept = { ...sealed, seal: seal(this.keyToWrite(), sealed) };
    const same = (g: KeptGrant) => g.field === grant.field && g.task === grant.task && g.real === grant.real;
    this.grants = [...this.grants.filter((g) => !same(g)), kept].slice(-MAX_GRANTS);
    await this.write();
    return shown(kept);
  }

  /**
   * Drops the grants of `path` (as picked or its real path) for `field`: for the task in
   * `taskFolder` only, or for every task (the person cleared the field). How many went.
   */
  async forget(field: ChosenField, path: string, taskFolder?: string): Promise<number> {
    const before = this.grants.length;
    this.grants = this.grants.filter(
      (g) =>
        !(
          g.field === field &&
          (g.path === path || g.real === path) &&
          (taskFolder === undefined || g.task === taskFolder)
        ),
    );
    const gone = before - this.grants.length;
    if (gone > 0) await this.write();
    return gone;
  }

  private file(name: string): string | null {
    return this.storeHome ? join(this.storeHome, name) : null;
  }

  private readKey(): Buffer | null {
    const file = this.file('chosen-files.key');
    if (file === null) return randomBytes(32);
    if (!existsSync(file)) return null;
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    return key.length === 32 ? key : null;
  }

  /** The key a new grant is sealed with: made (0600) on the first grant, or when unreadable. */
  private keyToWrite(): Buffer {
    if (this.key) return this.key;
    const key = randomBytes(32);
    const file = this.file('chosen-files.key');
    // A new key voids every entry sealed with a lost one: they were dropped on reading already.
    if (file && this.storeHome) {
      mkdirSync(this.storeHome, { recursive: true });
      writeFileSync(file, key.toString('base64url') + '\n', { mode: 0o600 });
    }
    this.key = key;
    return key;
  }

  private read(): KeptGrant[] {
    const file = this.file('chosen-files.json');
    if (!file || !existsSync(file)) return [];
    let list: unknown;
    try {
      list = (JSON.parse(readFileSync(file, 'utf8')) as { chosen?: unknown }).chosen;
    } catch (e) {
      log.warn(`${file} is not JSON (${String(e)}): no file chosen with Choose… is read until chosen again`);
      return [];
    }
    if (!Array.isArray(list)) return [];
    const kept = list.flatMap((g) => {
      const parsed = KeptGrant.safeParse(g);
      return parsed.success && this.verifies(parsed.data) ? [parsed.data] : [];
    });
    if (kept.length < list.length)
      log.warn(
        `${file}: ${list.length - kept.length} entr${list.length - kept.length === 1 ? 'y was' : 'ies were'} not written by Choose… (no valid seal) and grant nothing; choose the file again with Choose… → Your folders`,
      );
    return kept.slice(-MAX_GRANTS);
  }

  private verifies(g: KeptGrant): boolean {
    if (!this.key) return false;
    const want = Buffer.from(seal(this.key, g), 'base64url');
    const got = Buffer.from(g.seal, 'base64url');
    return got.length === want.length && timingSafeEqual(got, want);
  }

  private async write(): Promise<void> {
    const file = this.file('chosen-files.json');
    if (file) await writeStoreFile(file, { chosen: this.grants }, 0o600);
  }
}

/** The seal of a grant: every field that decides what it lets stepbox read, in a fixed order. */
function seal(key: Buffer, g: Omit<KeptGrant, 'seal'> & { seal?: string }): string {
  const what = JSON.stringify([g.field, g.task, g.task_name, g.path, g.real, g.kind, g.chosen_at]);
  return createHmac('sha256', key).update(what).digest('base64url');
}

/** A grant as the window sees it. */
function shown(g: KeptGrant): ChosenFile {
  return {
    field: g.field,
    task: g.task,
    task_name: g.task_name,
    path: g.path,
    kind: g.kind,
    chosen_at: g.chosen_at,
  };
}
