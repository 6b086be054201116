import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTraceFile, TraceCorruptError } from '../../electron/engine/trace/trace-reader.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { breakLine, writeSampleEpisode } from '../support/traces.js';

// What an attacker (or a hand edit) can put where a trace is: each is refused, or named, in
// plain words that never quote the file, without hanging or reading it unbounded.

const fixtures = fileURLToPath(new URL('../fixtures/traces/', import.meta.url));
const v1 = () => readFileSync(join(fixtures, 'v1/every-event.jsonl'), 'utf8');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-hostile-reader-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** What reading `path` threw (the test fails when it did not throw). */
function thrown(read: () => unknown): TraceCorruptError {
  try {
    read();
  } catch (e) {
    expect(e).toBeInstanceOf(TraceCorruptError);
    return e as TraceCorruptError;
  }
  throw new Error('expected the read to be refused');
}

/** Writes `lines` as a trace file in the test's folder. */
function trace(name: string, lines: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

describe('the trace reader says what is wrong in plain words', () => {
  it('an unknown event type: the line, the type and the one it may have meant, not the schema’s list', () => {
    const lines = v1().trimEnd().split('\n');
    lines[4] = lines[4].replace(/"type":"[a-z_]+"/, '"type":"tool_reslt"');
    const e = thrown(() => readTraceFile(trace('typo.jsonl', lines)));
    expect(e.message).toBe(
      `${join(dir, 'typo.jsonl')}: line 5 has type "tool_reslt", which is not a stepbox.trace/1 event (did you mean "tool_result"?)`,
    );
    expect(e.message).not.toMatch(/Invalid discriminator|Expected '/);
    expect(e.fix).toMatch(/npx stepbox bundle import FILE --force/);
    expect(e.file).toBe(join(dir, 'typo.jsonl'));
  });

  it('a missing or mistyped field: the line, its event and the field with what it should be', () => {
    const lines = v1().trimEnd().split('\n');
    const at = lines.findIndex((l) => l.includes('"type":"tool_call"'));
    const call = JSON.parse(lines[at]) as Record<string, unknown>;
    delete call.call_id;
    call.name = 7;
    lines[at] = JSON.stringify(call);
    const e = thrown(() => readTraceFile(trace('field.jsonl', lines)));
    expect(e.message).toContain(`line ${at + 1} (tool_call) does not match stepbox.trace/1:`);
    expect(e.message).toContain('call_id is missing (it should be a string)');
    expect(e.message).toContain('name should be a string, not a number');
    expect(e.message).not.toMatch(/Invalid input/);
  });

  it('a line of binary bytes: named by its line, never quoted (no control characters reach a terminal)', () => {
    const lines = v1().trimEnd().split('\n');
    lines[3] = '\u0000\u0001\u001b]52;c;cGF5bG9hZA==\u0007\u001b[2Jgarbage';
    const e = thrown(() => readTraceFile(trace('binary.jsonl', lines)));
    expect(e.message).toBe(`${join(dir, 'binary.jsonl')}: line 4 is not JSON (at column 1)`);
  });

  it('a line that stops being JSON midway says the column, not the text', () => {
    const lines = v1().trimEnd().split('\n');
    lines[6] = '{"seq": 6, secret-token-123';
    const e = thrown(() => readTraceFile(trace('cut.jsonl', lines)));
    expect(e.message).toBe(`${join(dir, 'cut.jsonl')}: line 7 is not JSON (at column 12)`);
  });
});

describe('the trace reader refuses what is not a trace file, without hanging or reading it whole', () => {
  it('a symbolic link (even to a good trace) is refused, never followed', () => {
    const target = trace('target.jsonl', v1().trimEnd().split('\n'));
    const link = join(dir, 'link.jsonl');
    symlinkSync(target, link);
    const e = thrown(() => readTraceFile(link));
    expect(e.message).toBe(`${link} is a symbolic link, not a trace file`);
    expect(e.fix).toMatch(/remove this one, or put the trace itself there/);
  });

  it('a FIFO is refused at once (the open does not wait for a writer)', () => {
    const fifo = join(dir, 'pipe.jsonl');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    const e = thrown(() => readTraceFile(fifo));
    expect(e.message).toBe(`${fifo} is a named pipe (FIFO), not a trace file`);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a 2 GB file is refused from its size, not read', () => {
    const big = join(dir, 'big.jsonl');
    writeFileSync(big, '');
    truncateSync(big, 2 * 1024 ** 3);
    const started = Date.now();
    const e = thrown(() => readTraceFile(big));
    expect(e.message).toMatch(
      new RegExp(
        `^${big} is 2\\.00 GiB, more than the [\\d.]+ MiB a trace can be for this stepbox to read it$`,
      ),
    );
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a single 100 MB line is named by its line, not quoted', () => {
    const path = join(dir, 'one-line.jsonl');
    writeFileSync(path, '{"type":"header","x":"' + 'x'.repeat(100 * 1024 ** 2) + '\n{}\n');
    const e = thrown(() => readTraceFile(path));
    expect(e.message).toBe(`${path}: line 1 is not JSON (at column ${100 * 1024 ** 2 + 23})`);
  }, 30_000);
});

describe('a trace in the store belongs where its header says', () => {
  it('a trace whose header claims another branch is refused, and indexes as unreadable, not as that branch', async () => {
    const home = join(dir, 'home');
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    const a = await writeSampleEpisode(store, { steps: 1, task: 'a', end: null });
    const b = await writeSampleEpisode(store, { steps: 2, task: 'b', end: null });
    const fileB = store.resolve(b.branch).tracePath;
    // B's trace now says it is A's main branch.
    const lines = readFileSync(fileB, 'utf8').split('\n');
    lines[0] = lines[0].replaceAll(b.episode, a.episode);
    writeFileSync(fileB, lines.join('\n'));

    const e = thrown(() => store.readTrace(store.resolve(b.branch)));
    expect(e.message).toBe(
      `${fileB}: line 1 (its header) says it is branch ${a.episode} of episode ${a.episode}, not ${b.branch} of ${b.episode}, where it is in the store`,
    );
    const index = openIndex(home);
    try {
      index.refresh(store);
      // A's row is A's own (one step, task a), not B's trace under A's id.
      expect(index.branch(a.branch)).toMatchObject({ episode: a.episode, steps: 1 });
      expect(index.listEpisodes(-1).map((x) => x.task)).toEqual(['a']);
      expect(index.unreadable()).toEqual([
        { id: b.episode, branch: b.branch, schema: null, message: e.message, file: fileB, fix: e.fix },
      ]);
    } finally {
      index.close();
    }
  });

  it('a FIFO or a dangling link in a trace’s place: the store opens (its sweep does not hang) and the index names it', async () => {
    const home = join(dir, 'home');
    const first = openEpisodeStore(home, { skipMarkInterrupted: true });
    const good = await writeSampleEpisode(first, { steps: 1, end: null });
    const piped = await writeSampleEpisode(first, { steps: 1, end: null });
    const linked = await writeSampleEpisode(first, { steps: 1, end: null });
    const pipe = first.resolve(piped.branch).tracePath;
    unlinkSync(pipe);
    execFileSync('mkfifo', [pipe]);
    const link = first.resolve(linked.branch).tracePath;
    unlinkSync(link);
    symlinkSync(join(dir, 'nowhere.jsonl'), link);
    for (const w of [good, piped, linked]) w.writer.abandon();

    // The first open of a home in a process sweeps its open traces (it read them whole).
    const store = openEpisodeStore(home);
    const index = openIndex(home);
    try {
      index.refresh(store);
      expect(index.listEpisodes(-1).map((x) => x.id)).toEqual([good.episode]);
      expect(
        index
          .unreadable()
          .map((u) => [u.branch, u.message])
          .sort(),
      ).toEqual(
        [
          [piped.branch, `${pipe} is a named pipe (FIFO), not a trace file`],
          [linked.branch, `${link} is a symbolic link, not a trace file`],
        ].sort(),
      );
    } finally {
      index.close();
    }
  });

  it('a trace damaged after it was indexed loses its row and is named; mended, it is listed again', async () => {
    const home = join(dir, 'home');
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    const ep = await writeSampleEpisode(store, { steps: 3 });
    const file = store.resolve(ep.branch).tracePath;
    const index = openIndex(home);
    try {
      index.refresh(store);
      expect(index.branch(ep.branch)?.steps).toBe(3);
      const before = readFileSync(file);
      breakLine(file, 5);
      index.refresh(store);
      expect(index.branch(ep.branch)).toBeNull();
      expect(index.listEpisodes(-1)).toEqual([]);
      expect(index.unreadable().map((u) => [u.branch, u.file])).toEqual([[ep.branch, file]]);
      expect(index.unreadable()[0].message).toMatch(/: line 5 has type "tool_reslt"/);
      writeFileSync(file, before);
      index.refresh(store);
      expect(index.branch(ep.branch)?.steps).toBe(3);
      expect(index.unreadable()).toEqual([]);
    } finally {
      index.close();
    }
  });
});
