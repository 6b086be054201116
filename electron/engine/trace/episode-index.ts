import type Database from 'better-sqlite3';
import { openSqlite } from './sqlite.js';
import { fileVersion, standsFor, versionKey, type FileVersion } from './file-version.js';
import { join } from 'node:path';
import { canonicalJson } from '../../../shared/jcs.js';
import type { StoredBranch, StoredBranches, UnlistedFolder } from './stored-branches.js';
import { logger } from '../log.js';
import type { ParsedTrace } from './trace-reader.js';
import { branchOutcome } from './branch-outcome.js';
import { readLineage } from './lineage.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { stepDuration, summarizeSteps } from '../../../shared/step-summary.js';
import { candidateMarkOf, type CandidateMark } from '../../../shared/candidate-mark.js';
import { unreadableTrace, type UnreadableEpisode } from './unreadable-episodes.js';

const log = logger('index');

/** Bump when the tables change: an index of another version is dropped and rebuilt from the traces. */
const INDEX_VERSION = 9;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS episodes (
  id TEXT PRIMARY KEY, task TEXT NOT NULL, created INTEGER NOT NULL, agent TEXT NOT NULL, agent_kind TEXT NOT NULL,
  image TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS branches (
  id TEXT PRIMARY KEY, episode TEXT NOT NULL, parent TEXT, fork_step INTEGER, resume_of TEXT, created INTEGER NOT NULL,
  status TEXT NOT NULL, end_reason TEXT, steps INTEGER NOT NULL, unfinished INTEGER NOT NULL, episode_return REAL,
  gamma REAL NOT NULL, final_reward REAL,
  verifier_success INTEGER, candidate_number INTEGER, candidate_action TEXT,
  ended INTEGER, trace_path TEXT NOT NULL, trace_version TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS branches_episode ON branches(episode);
CREATE TABLE IF NOT EXISTS steps (
  branch TEXT NOT NULL, step INTEGER NOT NULL, kind TEXT NOT NULL, tool TEXT, args_summary TEXT,
  ok INTEGER, exit_code INTEGER, error_code TEXT, duration_ms REAL, PRIMARY KEY (branch, step));
CREATE TABLE IF NOT EXISTS tool_calls (
  branch TEXT NOT NULL, step INTEGER NOT NULL, call_id TEXT NOT NULL, name TEXT NOT NULL, args_summary TEXT NOT NULL,
  ok INTEGER, exit_code INTEGER, error_code TEXT, duration_ms REAL);
CREATE INDEX IF NOT EXISTS tool_calls_branch ON tool_calls(branch);
CREATE INDEX IF NOT EXISTS tool_calls_name ON tool_calls(name);
CREATE INDEX IF NOT EXISTS tool_calls_error ON tool_calls(error_code);
CREATE TABLE IF NOT EXISTS errors (
  branch TEXT NOT NULL, step INTEGER NOT NULL, code TEXT NOT NULL, fatal INTEGER NOT NULL, message TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS errors_branch ON errors(branch);
CREATE TABLE IF NOT EXISTS memory_writes (
  branch TEXT NOT NULL, step INTEGER NOT NULL, key TEXT NOT NULL, before_json TEXT NOT NULL, after_json TEXT NOT NULL,
  writer TEXT NOT NULL, corruption TEXT);
CREATE INDEX IF NOT EXISTS memory_writes_branch ON memory_writes(branch);
CREATE INDEX IF NOT EXISTS memory_writes_key ON memory_writes(key);
CREATE TABLE IF NOT EXISTS flags (
  branch TEXT NOT NULL, rule TEXT NOT NULL, step INTEGER, severity TEXT NOT NULL, message TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS flags_branch ON flags(branch);
CREATE TABLE IF NOT EXISTS flag_checks (
  branch TEXT PRIMARY KEY, trace_path TEXT NOT NULL, trace_version TEXT NOT NULL, rules TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS unreadable (
  branch TEXT PRIMARY KEY, episode TEXT NOT NULL, trace_path TEXT NOT NULL, trace_version TEXT NOT NULL,
  cause_path TEXT, cause_version TEXT, schema TEXT, message TEXT NOT NULL, file TEXT NOT NULL, fix TEXT);
`;

/** The tables read from the traces alone (a rebuild empties them; flags come from `check`). */
const FROM_TRACES = ['episodes', 'branches', 'steps', 'tool_calls', 'errors', 'memory_writes', 'unreadable'];

/** A QA flag as the index stores it (written by `stepbox check` through {@link EpisodeIndex.replaceFlags}). */
export interface IndexedFlag {
  readonly rule: string;
  /** The step it points at; null for a flag on the whole episode. */
  readonly step: number | null;
  readonly severity: string;
  readonly message: string;
}

/** A branch row as `list` shows it. */
export interface BranchRow {
  readonly id: string;
  readonly episode: string;
  readonly parent: string | null;
  readonly fork_step: number | null;
  /** The branch this one resumed (`stepbox resume`), or null for a fork or the main branch. */
  readonly resume_of: string | null;
  /** An episode status, or `running` while the trace is open. */
  readonly status: string;
  readonly end_reason: string | null;
  readonly steps: number;
  /** Steps with a row and no snapshot after `steps` (see branch-outcome.ts). */
  readonly unfinished: number;
  /** The discounted return (see branch-outcome.ts). */
  readonly return: number | null;
  /** The discount of that return (the task's γ). */
  readonly gamma: number;
  /** The verifier's final reward. */
  readonly final_reward: number | null;
  readonly verifier_success: boolean | null;
  /** For a candidate branch, its number and the action it tried (shared/candidate-mark.ts); else null. */
  readonly candidate: CandidateMark | null;
  readonly created: number;
  readonly ended: number | null;
  readonly flags: number;
}

/** An episode row with its branches. */
export interface EpisodeRow {
  readonly id: string;
  readonly task: string;
  readonly created: number;
  readonly agent: string;
  /** The agent's kind as its trace header recorded it (an ATIF import: `atif`), never re-derived from the spec. */
  readonly agentKind: string;
  readonly image: string;
  readonly branches: readonly BranchRow[];
}

/** Filters of `stepbox search`; all given ones must match (AND), each on any step of a branch. */
export interface SearchQuery {
  readonly tool?: string;
  /** A tool error code or an `error` event code. */
  readonly error?: string;
  readonly flag?: string;
  /** A memory key, optionally with the value written (`KEY` or `KEY=VALUE`). */
  readonly memory?: { readonly key: string; readonly value?: string };
  readonly limit?: number;
}

/** One thing a filter matched. */
export interface SearchHit {
  readonly filter: 'tool' | 'error' | 'flag' | 'memory';
  readonly step: number | null;
  readonly detail: string;
}

/** A branch that matched every filter, with what matched. */
export interface SearchMatch {
  readonly episode: string;
  readonly branch: string;
  readonly task: string;
  readonly status: string;
  readonly hits: readonly SearchHit[];
}

type Row = Record<string, unknown>;

/**
 * The SQLite index of episodes, branches, steps, tool calls, errors, memory writes and
 * QA flags: a cache of the traces (which stay the source of truth), so it can always be
 * rebuilt. WAL and a 5 s busy timeout let `serve`, `run` and `batch` write at once;
 * every write is one IMMEDIATE transaction.
 */
export class EpisodeIndex {
  private readonly db: Database.Database;

  constructor(
    readonly path: string,
    /**
     * Read-only: the file as it is, nothing written (no migration, no WAL set-up); for a
     * store on a full disk, where `list` and `show` must still answer.
     */
    options: { readonly readonly?: boolean } = {},
  ) {
    if (options.readonly) {
      // immutable: no lock or -shm file to create (a full disk has no room for one).
      this.db = openSqlite(`file:${path}?immutable=1`, { readonly: true, fileMustExist: true });
      const version = this.db.pragma('user_version', { simple: true }) as number;
      if (version !== INDEX_VERSION) {
        this.db.close();
        throw new Error(`the index is version ${version}, not ${INDEX_VERSION}`);
      }
      return;
    }
    this.db = openSqlite(path);
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.migrate();
  }

  private migrate(): void {
    this.db
      .transaction(() => {
        const version = this.db.pragma('user_version', { simple: true }) as number;
        if (version !== INDEX_VERSION && version !== 0) {
          log.info(`index version ${version} ≠ ${INDEX_VERSION}: dropping it; it is rebuilt from the traces`);
          for (const t of [...FROM_TRACES, 'flags', 'flag_checks']) this.db.exec(`DROP TABLE IF EXISTS ${t}`);
        }
        this.db.exec(SCHEMA);
        this.db.pragma(`user_version = ${INDEX_VERSION}`);
      })
      .immediate();
  }

  /** Closes the database. */
  close(): void {
    this.db.close();
  }

  /** Whether the database is still open (not {@link close}d). */
  get isOpen(): boolean {
    return this.db.open;
  }

  /**
   * (Re)indexes one branch from its trace, replacing whatever the index had for it
   * (idempotent). Flags are kept: they come from `check`, not from the trace.
   * `lineage` is the branch's events with a fork's inherited steps ({@link lineageEvents}):
   * its outcome is worked out over them, as every view does, so an open fork's return in
   * the list is the one its window and compare show. Searched steps stay the trace's own.
   * `at` is the trace file's version taken before it was read: a write during the read then
   * leaves the row under an older version than the file's, and the next refresh reads it again
   * (a stat after the read kept a half-rewritten read under the finished file's version).
   */
  indexBranch(trace: ParsedTrace, lineage?: readonly TraceEvent[], at?: FileVersion | null): void {
    const h = trace.header;
    const all = [...trace.events, ...trace.partial];
    // Step 0 is the setup, not a decision: the index counts and searches decisions.
    const steps = summarizeSteps(all).filter((s) => s.step >= 1);
    const outcome = branchOutcome(h, lineage ?? all, trace.end);
    const candidate = candidateMarkOf(h, all);
    const st = at === undefined ? fileVersion(trace.path) : at;
    const del = (table: string) => this.db.prepare(`DELETE FROM ${table} WHERE branch = ?`).run(h.branch);
    this.db
      .transaction(() => {
        // The main branch's header describes the episode; a fork only creates the row if missing.
        this.db
          .prepare(
            h.branch === h.episode
              ? `INSERT INTO episodes (id, task, created, agent, agent_kind, image) VALUES (?, ?, ?, ?, ?, ?)
                 ON CONFLICT(id) DO UPDATE SET task = excluded.task, agent = excluded.agent,
                   agent_kind = excluded.agent_kind, image = excluded.image, created = excluded.created`
              : `INSERT OR IGNORE INTO episodes (id, task, created, agent, agent_kind, image) VALUES (?, ?, ?, ?, ?, ?)`,
          )
          .run(
            h.episode,
            typeof h.task.name === 'string' ? h.task.name : '(unnamed)',
            h.created,
            h.agent.spec,
            h.agent.kind,
            h.image,
          );
        this.db
          .prepare(
            `INSERT OR REPLACE INTO branches (id, episode, parent, fork_step, resume_of, created, status, end_reason,
               steps, unfinished, episode_return, gamma, final_reward, verifier_success, candidate_number,
               candidate_action, ended, trace_path, trace_version)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            h.branch,
            h.episode,
            h.parent_branch,
            h.fork_step,
            typeof h.resume_of === 'string' ? h.resume_of : null,
            h.created,
            trace.end?.status ?? 'running',
            trace.end?.end_reason ?? null,
            outcome.steps,
            outcome.unfinished,
            outcome.return,
            outcome.gamma,
            outcome.final_reward,
            trace.end?.verifier ? Number(trace.end.verifier.success) : null,
            candidate?.number ?? null,
            candidate?.action ?? null,
            trace.end?.t ?? null,
            trace.path,
            st ? versionKey(st) : '',
          );
        for (const t of ['steps', 'tool_calls', 'errors', 'memory_writes']) del(t);
        const insStep = this.db.prepare(
          `INSERT OR REPLACE INTO steps (branch, step, kind, tool, args_summary, ok, exit_code, error_code, duration_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        const insCall = this.db.prepare(
          `INSERT INTO tool_calls (branch, step, call_id, name, args_summary, ok, exit_code, error_code, duration_ms)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        );
        const insErr = this.db.prepare(
          `INSERT INTO errors (branch, step, code, fatal, message) VALUES (?, ?, ?, ?, ?)`,
        );
        const insMem = this.db.prepare(
          `INSERT INTO memory_writes (branch, step, key, before_json, after_json, writer, corruption) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const s of steps) {
          const results = s.results;
          const firstError = results.find((r) => r.error_code !== null)?.error_code ?? null;
          const nonZero = results.find((r) => r.exit_code !== null && r.exit_code !== 0)?.exit_code;
          insStep.run(
            h.branch,
            s.step,
            s.kind,
            s.calls.map((c) => c.name).join(',') || null,
            s.kind === 'tool' ? s.calls.map((c) => c.args_summary).join('; ') : s.action,
            results.length ? Number(results.every((r) => r.ok)) : null,
            nonZero ?? results.find((r) => r.exit_code !== null)?.exit_code ?? null,
            firstError ?? (s.kind === 'parse_error' ? 'parse_error' : null),
            stepDuration(results),
          );
          for (const c of s.calls) {
            const r = results.find((x) => x.call_id === c.call_id);
            insCall.run(
              h.branch,
              s.step,
              c.call_id,
              c.name,
              c.args_summary,
              r ? Number(r.ok) : null,
              r?.exit_code ?? null,
              // What really happened: a timeout masked by a fallback or an override is still found by --error.
              r ? (r.real ? r.real.error_code : r.error_code) : null,
              r?.duration_ms ?? null,
            );
          }
          for (const e of s.errors) insErr.run(h.branch, s.step, e.code, Number(e.fatal), e.message);
          if (s.kind === 'parse_error') insErr.run(h.branch, s.step, 'parse_error', 0, s.parse_error ?? '');
          for (const m of s.memory_writes)
            insMem.run(h.branch, s.step, m.key, jsonOf(m.before), jsonOf(m.after), m.writer, m.corruption);
        }
        // Errors outside any step (setup, step 0) still count for --error.
        for (const e of all)
          if (e.type === 'error' && e.step === 0) insErr.run(h.branch, 0, e.code, Number(e.fatal), e.message);
      })
      .immediate();
  }

  /** Replaces a branch's QA flags (what `stepbox check` found). */
  replaceFlags(branch: string, flags: readonly IndexedFlag[]): void {
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM flags WHERE branch = ?').run(branch);
        const ins = this.db.prepare(
          'INSERT INTO flags (branch, rule, step, severity, message) VALUES (?, ?, ?, ?, ?)',
        );
        for (const f of flags) ins.run(branch, f.rule, f.step, f.severity, f.message);
      })
      .immediate();
  }

  /**
   * Records that the branch's flags were computed by the QA rules `rules` (their id: see
   * flagRulesId) from the trace version the index holds for it, so a library listing need not
   * read that trace again until it or the rules change.
   */
  markFlagsChecked(branch: string, rules: string, at?: FileVersion): void {
    // The version the flags were computed from when the caller knows it (the content read);
    // else the one the index holds for the branch.
    if (at) {
      this.db
        .prepare(
          'INSERT OR REPLACE INTO flag_checks (branch, trace_path, trace_version, rules) VALUES (?, ?, ?, ?)',
        )
        .run(branch, at.path, versionKey(at), rules);
      return;
    }
    this.db
      .prepare(
        `INSERT OR REPLACE INTO flag_checks (branch, trace_path, trace_version, rules)
         SELECT id, trace_path, trace_version, ? FROM branches WHERE id = ?`,
      )
      .run(rules, branch);
  }

  /** Branches whose flags were never computed by these rules for the trace version the index holds (see {@link markFlagsChecked}). */
  uncheckedBranches(rules: string): string[] {
    return (
      this.db
        .prepare(
          `SELECT b.id FROM branches b LEFT JOIN flag_checks c ON c.branch = b.id
           WHERE c.branch IS NULL OR c.trace_path != b.trace_path OR c.trace_version != b.trace_version
             OR c.rules != ?`,
        )
        .all(rules) as Row[]
    ).map((r) => r.id as string);
  }

  /**
   * The branch's flags in the order they were found, when they were computed from this very
   * trace file (its version, as {@link markFlagsChecked} recorded it) by these
   * rules; null when the trace or the rules changed since, or it was never checked. Opening a branch reads them instead of
   * running every QA rule over its trace again (issue 19.10).
   */
  checkedFlags(branch: string, rules: string, trace: FileVersion): IndexedFlag[] | null {
    // Under its own name, or the unsettled one whose bytes it still holds (file-version.ts's standsFor).
    const own = versionKey(trace);
    const checked = this.db
      .prepare(
        'SELECT 1 FROM flag_checks WHERE branch = ? AND trace_path = ? AND trace_version IN (?, ?) AND rules = ?',
      )
      .get(branch, trace.path, own, standsFor(trace) ?? own, rules);
    if (!checked) return null;
    return this.db
      .prepare('SELECT rule, step, severity, message FROM flags WHERE branch = ? ORDER BY rowid')
      .all(branch) as IndexedFlag[];
  }

  /** A branch's flags, in step order. */
  flagsOf(branch: string): IndexedFlag[] {
    return this.db
      .prepare('SELECT rule, step, severity, message FROM flags WHERE branch = ? ORDER BY step, rule')
      .all(branch) as IndexedFlag[];
  }

  /** Forgets a branch entirely (its trace is gone); the episode too once it has no branch left. */
  removeBranch(branch: string): void {
    this.db
      .transaction(() => {
        const row = this.db.prepare('SELECT episode FROM branches WHERE id = ?').get(branch) as
          Row | undefined;
        for (const t of ['steps', 'tool_calls', 'errors', 'memory_writes', 'flags'])
          this.db.prepare(`DELETE FROM ${t} WHERE branch = ?`).run(branch);
        this.db.prepare('DELETE FROM flag_checks WHERE branch = ?').run(branch);
        this.db.prepare('DELETE FROM branches WHERE id = ?').run(branch);
        if (row)
          this.db
            .prepare(
              'DELETE FROM episodes WHERE id = ? AND NOT EXISTS (SELECT 1 FROM branches WHERE episode = ?)',
            )
            .run(row.episode, row.episode);
      })
      .immediate();
  }

  /**
   * Brings the index in line with the store: indexes every branch whose trace changed
   * since it was indexed (its {@link FileVersion}: path, size, mtime, ctime, inode, and
   * whether it had settled, so a rewrite in place is never taken for the trace indexed) and
   * forgets branches whose trace is gone.
   * Returns how many branches it (re)indexed. A trace that cannot be read (a line rewritten
   * after it was indexed, a corrupt fork, a link or a FIFO in its place) loses its row and is
   * recorded as unreadable ({@link unreadable}), read again only once it (or the file that
   * failed, a fork's parent's) changes. An episode folder the store cannot list (no meta.json
   * the sweep could rebuild, a damaged one) is recorded as unreadable too, with why.
   */
  refresh(store: StoredBranches): number {
    const known = new Map(
      (this.db.prepare('SELECT id, trace_path, trace_version FROM branches').all() as Row[]).map((r) => [
        r.id as string,
        r,
      ]),
    );
    const failed = new Map(
      (this.db.prepare('SELECT * FROM unreadable').all() as Row[]).map((r) => [r.branch as string, r]),
    );
    let indexed = 0;
    const seen = new Map<string, StoredBranch>();
    const bad = new Set<string>();
    for (const episode of store.listEpisodes()) {
      for (const b of store.branchesOrNone(episode)) {
        seen.set(b.branch, b);
        const st = fileVersion(b.tracePath);
        // Gone since it was listed (closed into its .gz meanwhile): the next refresh finds it.
        if (st === null) continue;
        const row = known.get(b.branch);
        if (sameVersion(row, 'trace', st)) continue;
        // Indexed before it settled, and it holds the very bytes read then: the row stands. It is
        // named now as every process names it (another, which did not read it then, would index
        // it again under its settled name, and this one again under the unsettled, each refresh).
        if (row && row.trace_path === st.path && row.trace_version === standsFor(st)) {
          this.renameVersion(b.branch, row.trace_version as string, versionKey(st));
          continue;
        }
        const f = failed.get(b.branch);
        if (f && sameVersion(f, 'trace', st) && causeUnchanged(f)) bad.add(b.branch);
        else if (this.tryIndex(store, b, st)) indexed += 1;
        else bad.add(b.branch);
      }
    }
    // A fork reads the steps it inherits from its parent's trace: when that cannot be read
    // (damaged after both were indexed), neither can the fork, however unchanged its own file.
    for (let more = true; more;) {
      more = false;
      for (const b of seen.values())
        if (
          b.parentBranch !== null &&
          bad.has(b.parentBranch) &&
          !bad.has(b.branch) &&
          !this.tryIndex(store, b)
        ) {
          bad.add(b.branch);
          more = true;
        }
    }
    const strays = new Set<string>();
    for (const folder of store.unlistedFolders?.() ?? []) {
      strays.add(folder.episode);
      this.recordUnlisted(folder, failed.get(folder.episode));
    }
    for (const id of known.keys()) if (!seen.has(id)) this.removeBranch(id);
    for (const id of failed.keys())
      if (!seen.has(id) && !strays.has(id))
        this.db.prepare('DELETE FROM unreadable WHERE branch = ?').run(id);
    return indexed;
  }

  /** Names a branch's trace version anew, in its row and its flag checks (see refresh). */
  private renameVersion(branch: string, from: string, to: string): void {
    this.db
      .transaction(() => {
        this.db
          .prepare('UPDATE branches SET trace_version = ? WHERE id = ? AND trace_version = ?')
          .run(to, branch, from);
        this.db
          .prepare('UPDATE flag_checks SET trace_version = ? WHERE branch = ? AND trace_version = ?')
          .run(to, branch, from);
      })
      .immediate();
  }

  /** Records an episode folder the store cannot list (unless the row says so already: no write, no watch event). */
  private recordUnlisted(folder: UnlistedFolder, had: Row | undefined): void {
    if (had && had.trace_path === folder.dir && had.message === folder.message && had.fix === folder.fix)
      return;
    this.removeBranch(folder.episode);
    this.db
      .prepare(
        `INSERT OR REPLACE INTO unreadable (branch, episode, trace_path, trace_version, cause_path, cause_version,
           schema, message, file, fix) VALUES (?, ?, ?, '', NULL, NULL, NULL, ?, ?, ?)`,
      )
      .run(folder.episode, folder.episode, folder.dir, folder.message, folder.file, folder.fix);
  }

  private tryIndex(store: StoredBranches, b: StoredBranch, at?: FileVersion): boolean {
    // Taken before the read (see indexBranch); a fork re-tried for its parent's sake has none yet.
    const own = at ?? fileVersion(b.tracePath);
    // Moved or removed meanwhile (closed into its .gz): not damage; the next refresh reads it where it is.
    if (own === null) return false;
    try {
      this.indexBranch(store.readTrace(b), lineageEvents(store, b), own);
      this.db.prepare('DELETE FROM unreadable WHERE branch = ?').run(b.branch);
      return true;
    } catch (e) {
      const u = unreadableTrace(e, b);
      log.warn(`${b.tracePath}: not indexed: ${u.message}`);
      this.recordUnreadable(b, u, own);
      return false;
    }
  }

  /**
   * Records that a branch's trace cannot be read, under the versions of its file and of the
   * file that failed; a row it had (indexed before the trace was damaged) goes, so the branch
   * is listed once, as unreadable, not with what its trace said before.
   */
  private recordUnreadable(b: StoredBranch, u: UnreadableEpisode, own: FileVersion): void {
    // Moved or removed while read: not damage; the next refresh reads it where it is.
    if (fileVersion(b.tracePath) === null) return;
    const cause = u.file !== b.tracePath ? fileVersion(u.file) : null;
    this.removeBranch(b.branch);
    this.db
      .prepare(
        `INSERT OR REPLACE INTO unreadable (branch, episode, trace_path, trace_version, cause_path, cause_version,
           schema, message, file, fix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        b.branch,
        b.episode,
        b.tracePath,
        versionKey(own),
        cause ? u.file : null,
        cause ? versionKey(cause) : null,
        u.schema,
        u.message,
        u.file,
        u.fix,
      );
  }

  /**
   * The branches of the store whose traces cannot be read, as the last {@link refresh} found
   * them (episode, then branch, main branches first): what `list` and the library name
   * with what is wrong and the fix, never leave out.
   */
  unreadable(): UnreadableEpisode[] {
    return (
      this.db
        .prepare('SELECT * FROM unreadable ORDER BY episode DESC, (branch = episode) DESC, branch')
        .all() as Row[]
    ).map((r) => ({
      id: r.episode as string,
      branch: r.branch as string,
      schema: (r.schema as string | null) ?? null,
      message: r.message as string,
      file: r.file as string,
      fix: (r.fix as string | null) ?? null,
    }));
  }

  /** Re-creates the index from the traces (flags of surviving branches are kept). Returns the branch count. */
  rebuild(store: StoredBranches): number {
    this.db
      .transaction(() => {
        for (const t of FROM_TRACES) this.db.exec(`DELETE FROM ${t}`);
      })
      .immediate();
    let n = 0;
    for (const episode of store.listEpisodes())
      for (const b of store.branchesOrNone(episode)) if (this.tryIndex(store, b)) n += 1;
    for (const folder of store.unlistedFolders?.() ?? []) this.recordUnlisted(folder, undefined);
    this.db.exec('DELETE FROM flags WHERE branch NOT IN (SELECT id FROM branches)');
    return n;
  }

  /** The most recent episodes (newest first) with their branches. */
  listEpisodes(limit = 20): EpisodeRow[] {
    const eps = this.db
      .prepare('SELECT * FROM episodes ORDER BY created DESC, id DESC LIMIT ?')
      .all(limit) as Row[];
    const branchesOf = this.db.prepare(
      `SELECT b.*, (SELECT COUNT(*) FROM flags f WHERE f.branch = b.id) AS flags
       FROM branches b WHERE episode = ? ORDER BY (b.id = b.episode) DESC, b.created, b.id`,
    );
    return eps.map((e) => ({
      id: e.id as string,
      task: e.task as string,
      created: e.created as number,
      agent: e.agent as string,
      agentKind: e.agent_kind as string,
      image: e.image as string,
      branches: (branchesOf.all(e.id) as Row[]).map(branchRow),
    }));
  }

  /** The ids of every indexed episode. */
  episodeIds(): Set<string> {
    return new Set((this.db.prepare('SELECT id FROM episodes').all() as Row[]).map((r) => r.id as string));
  }

  /** One branch's row, or null. */
  branch(id: string): BranchRow | null {
    const r = this.db
      .prepare(
        'SELECT b.*, (SELECT COUNT(*) FROM flags f WHERE f.branch = b.id) AS flags FROM branches b WHERE id = ?',
      )
      .get(id) as Row | undefined;
    return r ? branchRow(r) : null;
  }

  /** Every indexed table's row count (tests compare a rebuilt index with an incremental one through `dump`). */
  dump(): Record<string, Row[]> {
    const out: Record<string, Row[]> = {};
    const order: Record<string, string> = {
      episodes: 'id',
      branches: 'id',
      steps: 'branch, step',
      tool_calls: 'branch, step, call_id',
      errors: 'branch, step, code, message',
      memory_writes: 'branch, step, key, after_json',
      flags: 'branch, step, rule',
    };
    for (const [t, by] of Object.entries(order))
      out[t] = this.db.prepare(`SELECT * FROM ${t} ORDER BY ${by}`).all() as Row[];
    // What was read, not when: a version says whether it had settled when read (file-version.ts),
    // so the same trace indexed at its close and rebuilt seconds later differs there alone.
    out.branches = out.branches.map((r) => {
      const { trace_version: _version, ...rest } = r;
      return rest;
    });
    return out;
  }

  /** Branches matching every given filter, newest first, with the steps that matched. */
  search(q: SearchQuery): SearchMatch[] {
    const perFilter: Map<string, SearchHit[]>[] = [];
    const collect = (filter: SearchHit['filter'], rows: Row[], detail: (r: Row) => string) => {
      const m = new Map<string, SearchHit[]>();
      for (const r of rows) {
        const list = m.get(r.branch as string) ?? [];
        list.push({ filter, step: (r.step as number | null) ?? null, detail: detail(r) });
        m.set(r.branch as string, list);
      }
      perFilter.push(m);
    };
    if (q.tool !== undefined)
      collect(
        'tool',
        this.db.prepare('SELECT * FROM tool_calls WHERE name = ? ORDER BY branch, step').all(q.tool) as Row[],
        (r) => `${r.name} ${r.args_summary}`,
      );
    if (q.error !== undefined)
      collect(
        'error',
        this.db
          .prepare(
            `SELECT branch, step, name || ': ' || error_code AS d FROM tool_calls WHERE error_code = ?
             UNION ALL SELECT branch, step, code || ': ' || message AS d FROM errors WHERE code = ?
             ORDER BY branch, step`,
          )
          .all(q.error, q.error) as Row[],
        (r) => r.d as string,
      );
    if (q.flag !== undefined)
      collect(
        'flag',
        this.db.prepare('SELECT * FROM flags WHERE rule = ? ORDER BY branch, step').all(q.flag) as Row[],
        (r) => `${r.rule} (${r.severity}): ${r.message}`,
      );
    if (q.memory !== undefined) {
      const { key, value } = q.memory;
      const rows =
        value === undefined
          ? (this.db
              .prepare('SELECT * FROM memory_writes WHERE key = ? ORDER BY branch, step')
              .all(key) as Row[])
          : (this.db
              .prepare(
                `SELECT * FROM memory_writes WHERE key = ? AND after_json IN (${memoryValueForms(value)
                  .map(() => '?')
                  .join(', ')}) ORDER BY branch, step`,
              )
              .all(key, ...memoryValueForms(value)) as Row[]);
      collect(
        'memory',
        rows,
        (r) => `${r.key} = ${r.after_json} (by ${r.writer}${r.corruption ? `, ${r.corruption}` : ''})`,
      );
    }
    if (perFilter.length === 0) return [];
    const branchIds = [...perFilter[0].keys()].filter((b) => perFilter.every((m) => m.has(b)));
    const info = this.db.prepare(
      'SELECT b.id, b.episode, b.status, b.created, e.task FROM branches b JOIN episodes e ON e.id = b.episode WHERE b.id = ?',
    );
    return branchIds
      .map((id) => info.get(id) as Row | undefined)
      .filter((r): r is Row => r !== undefined)
      .sort((a, b) => (b.created as number) - (a.created as number))
      .slice(0, q.limit ?? 100)
      .map((r) => ({
        episode: r.episode as string,
        branch: r.id as string,
        task: r.task as string,
        status: r.status as string,
        hits: perFilter.flatMap((m) => m.get(r.id as string) ?? []),
      }));
  }
}

/** Whether a row's `<prefix>_path` and `<prefix>_version` are this file's as it is now. */
function sameVersion(row: Row | undefined, prefix: string, st: FileVersion): boolean {
  return (
    row !== undefined && row[`${prefix}_path`] === st.path && row[`${prefix}_version`] === versionKey(st)
  );
}

/** Whether the file that made a branch unreadable (a fork's parent's trace) is as it was then. */
function causeUnchanged(row: Row): boolean {
  if (row.cause_path === null) return true;
  const st = fileVersion(row.cause_path as string);
  return st !== null && sameVersion(row, 'cause', st);
}

function branchRow(r: Row): BranchRow {
  return {
    id: r.id as string,
    episode: r.episode as string,
    parent: (r.parent as string | null) ?? null,
    fork_step: (r.fork_step as number | null) ?? null,
    resume_of: (r.resume_of as string | null) ?? null,
    status: r.status as string,
    end_reason: (r.end_reason as string | null) ?? null,
    steps: r.steps as number,
    unfinished: r.unfinished as number,
    return: (r.episode_return as number | null) ?? null,
    gamma: r.gamma as number,
    final_reward: (r.final_reward as number | null) ?? null,
    verifier_success:
      r.verifier_success === null || r.verifier_success === undefined ? null : r.verifier_success === 1,
    candidate:
      typeof r.candidate_number === 'number'
        ? { number: r.candidate_number, action: (r.candidate_action as string | null) ?? '' }
        : null,
    created: r.created as number,
    ended: (r.ended as number | null) ?? null,
    flags: (r.flags as number) ?? 0,
  };
}

function jsonOf(v: unknown): string {
  return canonicalJson(v === undefined ? null : v);
}

/**
 * The stored forms a `--memory KEY=VALUE` matches: VALUE as JSON when it parses
 * (`null`, `3`, `{"a":1}`), and always as a plain string (`None`, `"null"` typed bare).
 */
export function memoryValueForms(value: string): string[] {
  const forms = new Set([canonicalJson(value)]);
  try {
    forms.add(canonicalJson(JSON.parse(value)));
  } catch {
    // Not JSON: the string form alone.
  }
  return [...forms];
}

/** The index file of a store home. */
export function indexPath(home: string): string {
  return join(home, 'index.sqlite');
}

/** Opens (creating if needed) the index of a store home. Close it when done. */
export function openIndex(home: string): EpisodeIndex {
  return new EpisodeIndex(indexPath(home));
}

/**
 * An index that writes nothing to the store, for when the store's own cannot be opened or
 * updated (a full disk): the index file read-only as it was, or, when that cannot be read
 * either, one in memory rebuilt from the traces. Says which in `how`.
 */
export function readOnlyIndex(store: StoredBranches): { index: EpisodeIndex; how: string } {
  try {
    return {
      index: new EpisodeIndex(indexPath(store.home), { readonly: true }),
      how: 'the index as it was, read-only',
    };
  } catch {
    const index = new EpisodeIndex(':memory:');
    index.rebuild(store);
    return { index, how: 'read from the traces, nothing written' };
  }
}

/**
 * Indexes a branch the store just closed (the store's default `onBranchClosed`): into `open`
 * when the caller keeps an index open (the engine's), else through a connection opened for it.
 */
export function indexClosedBranch(store: StoredBranches, b: StoredBranch, open?: EpisodeIndex): void {
  const index = open ?? openIndex(store.home);
  try {
    const at = fileVersion(b.tracePath);
    index.indexBranch(store.readTrace(b), lineageEvents(store, b), at);
  } finally {
    if (!open) index.close();
  }
}

/**
 * A stored branch's events with the steps a fork inherits (the one lineage reader), its
 * incomplete last step included: what {@link branchOutcome} is worked out over. Undefined
 * for a main branch, whose own trace is its lineage (not read twice).
 */
export function lineageEvents(store: StoredBranches, b: StoredBranch): TraceEvent[] | undefined {
  if (b.parentBranch === null) return undefined;
  const resolve = (id: string) => {
    const found = store.branchesOrNone(b.episode).find((x) => x.branch === id);
    if (!found) throw new Error(`branch ${id} is not in episode ${b.episode}`);
    return found;
  };
  const lineage = readLineage({ resolve, readTrace: (x) => store.readTrace(x) }, b);
  return [...lineage.events, ...lineage.partial];
}
