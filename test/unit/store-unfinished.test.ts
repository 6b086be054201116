import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEpisodeStore, type DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { readTraceFile } from '../../electron/engine/trace/trace-reader.js';
import type { HeaderFields } from '../../electron/engine/trace/trace-store.js';
import { parseJsonOutput, PROJECT_ROOT, runCli } from '../support/cli.js';
import { sampleHeader, writeSampleEpisode } from '../support/traces.js';

let dir: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-unfinished-'));
  home = join(dir, 'home');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid;
}

/** An episode whose writer was killed after its header: the header names a process that is gone. */
function killedEpisode(store: DiskEpisodeStore, pid: number): string {
  const { episode, writer } = store.createEpisode(
    sampleHeader('x', 'x', 'kill-me') as unknown as HeaderFields,
  );
  writer.abandon();
  const path = join(store.episodeDir(episode), 'branches', `${episode}.jsonl`);
  const [first, ...rest] = readFileSync(path, 'utf8').split('\n');
  const header = JSON.parse(first) as { writer: { pid: number; start_time: string | null } };
  header.writer = { ...header.writer, pid, start_time: null };
  writeFileSync(path, [JSON.stringify(header), ...rest].join('\n'));
  return episode;
}

describe('what a kill leaves half-made is completed, recovered or swept by the next command', () => {
  it('rebuilds a lost meta.json, removes folders and traces with nothing recorded, and says so on stderr', async () => {
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    const pid = deadPid();
    const episodes = store.episodesDir;
    // A kill between the folder and meta.json, after the header (older versions): meta is rebuilt.
    const noMeta = killedEpisode(store, pid);
    unlinkSync(join(episodes, noMeta, 'meta.json'));
    // A kill right after the folder was made (older versions): nothing recorded.
    const bare = 'ep-20200101-000000-aaaa';
    mkdirSync(join(episodes, bare, 'branches'), { recursive: true });
    mkdirSync(join(episodes, bare, 'snapshots'), { recursive: true });
    // A kill during the header: a 0-byte trace, and a half-written one.
    const empty = killedEpisode(store, pid);
    writeFileSync(join(episodes, empty, 'branches', `${empty}.jsonl`), '');
    const torn = killedEpisode(store, pid);
    const tornPath = join(episodes, torn, 'branches', `${torn}.jsonl`);
    writeFileSync(tornPath, readFileSync(tornPath, 'utf8').slice(0, 40));
    // A fork whose header was cut off: the branch goes, its episode stays.
    const forked = killedEpisode(store, pid);
    writeFileSync(join(episodes, forked, 'branches', 'b-20200101-000000-ffff.jsonl'), '{"seq":0,"t":1');
    // An episode being assembled when its process was killed, and one a live process is assembling.
    const creatingDead = `.creating-ep-20200101-000000-dddd-${pid}`;
    mkdirSync(join(episodes, creatingDead, 'branches'), { recursive: true });
    const creatingLive = `.creating-ep-20200101-000000-eeee-${process.pid}`;
    mkdirSync(join(episodes, creatingLive, 'branches'), { recursive: true });
    // A durable write's temp file whose process died.
    writeFileSync(join(episodes, forked, `meta.json.tmp-${pid}-abc`), '{');

    const env = { STEPBOX_HOME: home };
    const list = await runCli(['list', '--json'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toContain(`recovered episode ${noMeta}: its meta.json was lost`);
    expect(list.stderr).toContain(`removed episode ${bare}: a kill left its folder without meta.json`);
    expect(list.stderr).toContain(
      `removed episode ${empty}: its trace was cut off before its header (0 bytes`,
    );
    expect(list.stderr).toContain(
      `removed episode ${torn}: its trace was cut off before its header (40 bytes`,
    );
    expect(list.stderr).toContain(`removed branch b-20200101-000000-ffff of ${forked}`);
    expect(list.stderr).toContain('removed the unfinished episode ep-20200101-000000-dddd');
    expect(list.stderr).toContain(`closed ${noMeta} of ${noMeta} as interrupted`);
    const listed = parseJsonOutput<{ episodes: { id: string }[] }>(list).episodes.map((e) => e.id);
    expect(listed.sort()).toEqual([noMeta, forked].sort());
    expect(readdirSync(episodes).sort()).toEqual([noMeta, forked, creatingLive].sort());
    expect(existsSync(join(episodes, forked, `meta.json.tmp-${pid}-abc`))).toBe(false);
    // The recovered episode is whole again: shown, closed as interrupted.
    const trace = readTraceFile(join(episodes, noMeta, 'branches', `${noMeta}.jsonl.gz`));
    expect(trace.end?.status).toBe('interrupted');
    const show = await runCli(['show', noMeta], { env });
    expect(show.code, show.stderr).toBe(0);

    // Nothing left to warn about, and gc --older-than clears what is old (nothing skipped).
    const again = await runCli(['gc', '--older-than', '0s', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    const report = parseJsonOutput<{ episodes: { id: string }[]; skipped_live: string[] }>(again);
    expect(report.episodes.map((e) => e.id).sort()).toEqual([noMeta, forked].sort());
    expect(report.skipped_live).toEqual([]);
  }, 60_000);

  it('keeps a folder without meta.json that holds anything (a FIFO trace, a file, a closed trace) and lists it as unreadable, with why', async () => {
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    const episodes = store.episodesDir;
    // A FIFO where the main trace would be: reading it must not hang, and nothing proves it ours.
    const piped = 'ep-20200101-000000-aaaa';
    mkdirSync(join(episodes, piped, 'branches'), { recursive: true });
    const fifo = join(episodes, piped, 'branches', `${piped}.jsonl`);
    execFileSync('mkfifo', [fifo]);
    // A file a person put in an episode-like folder.
    const notes = 'ep-20200101-000000-bbbb';
    mkdirSync(join(episodes, notes), { recursive: true });
    writeFileSync(join(episodes, notes, 'notes.txt'), 'mine\n');
    // A closed episode whose meta.json was lost: its recorded steps are not to be deleted.
    const closed = (await writeSampleEpisode(store, { steps: 2 })).episode;
    unlinkSync(join(episodes, closed, 'meta.json'));
    // A FIFO in meta.json's place: every listing reads every meta.json, and none may hang on it.
    const fifoMeta = 'ep-20200101-000000-dddd';
    mkdirSync(join(episodes, fifoMeta, 'branches'), { recursive: true });
    execFileSync('mkfifo', [join(episodes, fifoMeta, 'meta.json')]);
    // Nothing but empty folders: what a kill of an older version left; removed as before.
    const bare = 'ep-20200101-000000-cccc';
    mkdirSync(join(episodes, bare, 'branches'), { recursive: true });

    const env = { STEPBOX_HOME: home };
    const list = await runCli(['list', '--json'], { env, timeoutMs: 30_000 });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toContain(`removed episode ${bare}: a kill left its folder without meta.json`);
    for (const kept of [piped, notes, closed]) {
      expect(existsSync(join(episodes, kept)), kept).toBe(true);
      expect(list.stderr).toContain(`left episode folder ${kept} as it is`);
    }
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readFileSync(join(episodes, notes, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(episodes, closed, 'branches', `${closed}.jsonl.gz`))).toBe(true);

    const doc = parseJsonOutput<{ unreadable: { id: string; message: string; file: string; fix: string }[] }>(
      list,
    );
    const why = Object.fromEntries(doc.unreadable.map((u) => [u.id, u]));
    expect(Object.keys(why).sort()).toEqual([piped, notes, closed, fifoMeta].sort());
    expect(why[fifoMeta].message).toBe(
      `${join(episodes, fifoMeta, 'meta.json')} is damaged: it is not a regular file (a FIFO, a socket or a device)`,
    );
    expect(why[piped].message).toBe(
      `${fifo} is a named pipe (FIFO), not a trace file, and its episode folder has no meta.json`,
    );
    expect(why[piped].file).toBe(fifo);
    expect(why[notes].message).toBe(
      `${join(episodes, notes)}: no meta.json, and no trace to rebuild it from (${join(episodes, notes, 'branches', `${notes}.jsonl`)} is missing)`,
    );
    const gz = join(episodes, closed, 'branches', `${closed}.jsonl.gz`);
    expect(why[closed].message).toBe(
      `${gz}: its episode folder has no meta.json (a closed trace is not read to rebuild one)`,
    );
    expect(why[closed].file).toBe(gz);
    for (const u of doc.unreadable) expect(u.fix).toContain(`rm -r ${join(episodes, u.id)}`);

    // The text list says the same, under the readable ones; a second start removes nothing.
    const text = await runCli(['list'], { env, timeoutMs: 30_000 });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${piped}: ${fifo} is a named pipe (FIFO), not a trace file, and its`);
    // show on it says the same, with the fix, as the library's entry promises.
    const shown = await runCli(['show', piped], { env, timeoutMs: 30_000 });
    expect(shown.code, shown.stderr).toBe(3);
    expect(shown.stderr).toContain(`${fifo} is a named pipe (FIFO), not a trace file`);
    expect(shown.stderr).toContain(`Fix: look at what is in ${join(episodes, piped)}`);
    expect(readdirSync(episodes).sort()).toEqual([piped, notes, closed, fifoMeta].sort());
  }, 60_000);

  it('never leaves an episode folder without its meta and header: a kill at each point of creation', async () => {
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    for (const point of ['episode-folder', 'episode-meta', 'trace-header']) {
      // The built store (runCli needs dist/ too), in a process of its own that the crash point kills.
      const child = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { openEpisodeStore } = await import(${JSON.stringify(join(PROJECT_ROOT, 'dist/electron/engine/trace/episode-store.js'))});
           openEpisodeStore(${JSON.stringify(home)}, { skipMarkInterrupted: true }).createEpisode(${JSON.stringify(
             { ...sampleHeader('x', 'x'), schema: undefined, episode: undefined, branch: undefined },
           )});
           console.log('not killed');`,
        ],
        { env: { ...process.env, STEPBOX_TEST_CRASH_AT: point }, encoding: 'utf8' },
      );
      expect(child.signal, `${point}: ${child.stdout}${child.stderr}`).toBe('SIGKILL');
      // What the kill left is not an episode: nothing lists it, nothing warns about it.
      expect(store.listEpisodes(), point).toEqual([]);
      expect(
        readdirSync(store.episodesDir).filter((n) => n.startsWith('ep-')),
        point,
      ).toEqual([]);
    }
    const list = await runCli(['list', '--json'], { env: { STEPBOX_HOME: home } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr.match(/removed the unfinished episode/g)).toHaveLength(3);
    expect(readdirSync(store.episodesDir)).toEqual([]);
  }, 120_000);
});
