// The start form's `scripted:` paths: a relative path that leaves the task's folder (`..`)
// is refused before the start, naming the field, the resolved path and where to choose
// from; a missing file says so in the form's words, never Node's ENOENT text.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAppServices } from '../../electron/services/app-services.js';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import {
  commonPlaces,
  elidePath,
  outsideText,
  pathForPeople,
  pathOnCard,
  pathRoots,
  peopleText,
  scriptPlaceProblem,
  startFieldOf,
} from '../../shared/start-paths.js';
import { fakePorts } from '../support/contract-fakes.js';

describe('a resolved path as a task card says it', () => {
  it('says a path inside the task folder from the folder’s name, any other whole', () => {
    const folder = '/home/me/stepbox/resources/tasks/hello-python';
    expect(pathOnCard(`${folder}/agent.jsonl`, folder)).toBe('hello-python/agent.jsonl');
    expect(pathOnCard(`${folder}/agents/a.jsonl`, `${folder}/`)).toBe('hello-python/agents/a.jsonl');
    expect(pathOnCard(folder, folder)).toBe('hello-python');
    // A sibling whose name starts alike is outside.
    expect(pathOnCard('/home/me/stepbox/resources/tasks/hello-python2/a.jsonl', folder)).toBe(
      '/home/me/stepbox/resources/tasks/hello-python2/a.jsonl',
    );
    expect(pathOnCard('/etc/hosts', folder)).toBe('/etc/hosts');
  });

  it('says a path in the store from $STEPBOX_HOME, not the host’s layout (a screenshot showed /tmp/…/scripts/a.jsonl)', () => {
    const home = '/tmp/stepbox-e2e-AGadie';
    const roots = pathRoots(home, '/w/resources');
    // The store's folder names are whoever made them (`scripts-k3J9x`): the card says what the file is.
    expect(pathOnCard(`${home}/scripts-x/codex.jsonl`, '/w/resources/tasks/hello', roots)).toBe(
      'codex.jsonl in the store',
    );
    // A task folder inside the store names it from the task's folder (the nearer place).
    expect(pathOnCard(`${home}/cases/mine/agent.jsonl`, `${home}/cases/mine`, roots)).toBe(
      'mine/agent.jsonl',
    );
    expect(pathOnCard('/w/resources/agents/python-inside', '/w/resources/tasks/hello', roots)).toBe(
      'resources/agents/python-inside',
    );
    expect(pathOnCard('/etc/hosts', '/w/t', roots)).toBe('/etc/hosts');
    expect(pathForPeople(`${home}/a/b.jsonl`, roots)).toBe('$STEPBOX_HOME/a/b.jsonl');
    expect(pathForPeople('/work/main/resources/cases/fatal-error/agent.jsonl')).toBe(
      'fatal-error/agent.jsonl',
    );
  });
});

describe('where a start-form script may be read from', () => {
  it('refuses an absolute path outside every place as the start does, so the card says it before the click', () => {
    const common = commonPlaces('/store', '/w/resources', ['/p/umbrella/task.json']);
    // The server's words (file-fields.ts builds its places with the same commonPlaces).
    expect(scriptPlaceProblem('Agent', 'scripted:/etc/passwd', '/t', common)).toBe(
      'Agent: scripted:/etc/passwd is outside the folders stepbox reads files from ' +
        "(the task's folder, the store, stepbox's bundled files, an opened project); " +
        'pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them',
    );
  });

  it('refuses `..` out of the task folder, naming the field, the resolved path and the fix', () => {
    expect(scriptPlaceProblem('Agent', 'scripted:../../etc/passwd', '/w/resources/tasks/hello')).toBe(
      'Agent: scripted:../../etc/passwd resolves to /w/resources/etc/passwd, which is outside the folders ' +
        "stepbox reads files from (the task's folder); pick the file with Choose… → " +
        'Your folders to let stepbox read it, or give a path inside one of them',
    );
  });

  it('allows the task folder, the store, the bundled files, opened projects and other specs', () => {
    const common = commonPlaces('/store', '/w/resources', ['/p/umbrella/task.json', '/q/folder']);
    expect(scriptPlaceProblem('Agent', 'scripted:agent.jsonl', '/t')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:sub/../a.jsonl', '/t')).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:../store/s.jsonl', '/t', common)).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:/w/resources/agents/a.jsonl', '/t', common)).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:/p/umbrella/a.jsonl', '/t', common)).toBeNull();
    expect(scriptPlaceProblem('Agent', 'scripted:/q/folder/a.jsonl', '/t', common)).toBeNull();
    expect(scriptPlaceProblem('Agent', 'exec:python3 ../x.py', '/t')).toBeNull();
    // A sibling whose name starts like the folder is still outside it.
    expect(scriptPlaceProblem('Agent', 'scripted:../t2/a.jsonl', '/t')).toMatch(
      /outside the folders stepbox reads files from \(the task's folder\)/,
    );
  });

  it('episode.start refuses before starting, as a value with a code and the form’s words', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-start-place-'));
    mkdirSync(join(dir, 'task'));
    writeFileSync(join(dir, 'task', 'task.json'), '{}');
    const { ports } = fakePorts();
    let started = 0;
    const start = ports.harness.start.bind(ports.harness);
    ports.harness.start = async (...args) => {
      started += 1;
      return start(...args);
    };
    // The task's own path is read by the rule too: it lies among the places (as bundled files).
    const client = createClient(
      createMemoryTransport(createAppServices({ ...ports, bundledDir: join(dir, 'task') })),
    );
    const task = { kind: 'path' as const, path: join(dir, 'task', 'task.json') };

    const escaped = await client.episode.start({ task, agent: 'scripted:../../etc/passwd' });
    expect(escaped).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!escaped.ok)
      expect(escaped.error.message).toMatch(/^Agent: scripted:\.\.\/\.\.\/etc\/passwd resolves to /);

    const missing = await client.episode.start({ task, agent: 'scripted:x.jsonl' });
    expect(missing).toEqual({
      ok: false,
      error: {
        code: 'not_found',
        message: `Agent: no file at ${join(dir, 'task', 'x.jsonl')} — check the name or use Choose…`,
      },
    });
    const model = await client.episode.start({
      task,
      agent: 'exec:python3 a.py',
      agent_options: { model: 'scripted:../../m.jsonl' },
    });
    expect(model).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!model.ok) expect(model.error.message).toMatch(/^Its model calls answered by: /);
    expect(started).toBe(0);
  });

  it('one rule on start, batch, fork and the API: absolute paths outside, `..`, a symlink out — refused alike, whether the file exists or not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-one-rule-'));
    mkdirSync(join(dir, 'task'));
    mkdirSync(join(dir, 'store'));
    writeFileSync(join(dir, 'task', 'task.json'), '{}');
    writeFileSync(join(dir, 'task', 'ok.jsonl'), '{"content":"done"}\n');
    writeFileSync(join(dir, 'store', 'mine.jsonl'), '{"content":"done"}\n');
    symlinkSync('/etc/passwd', join(dir, 'task', 'link.jsonl'));
    const { ports } = fakePorts();
    const client = createClient(
      createMemoryTransport(
        createAppServices({ ...ports, storeHome: join(dir, 'store'), bundledDir: join(dir, 'task') }),
      ),
    );
    const task = { kind: 'path' as const, path: join(dir, 'task', 'task.json') };
    const refusal = async (
      call: Promise<{ ok: true } | { ok: false; error: { code: string; message: string } }>,
      typed: string,
    ): Promise<string> => {
      const res = await call;
      expect(res.ok, typed).toBe(false);
      if (res.ok) return '';
      expect(res.error.code, `${typed}: ${res.error.message}`).toBe('invalid_input');
      return res.error.message.replace(typed, 'TYPED');
    };
    for (const field of ['agent', 'model'] as const) {
      const start = (spec: string) =>
        client.episode.start(
          field === 'agent'
            ? { task, agent: spec }
            : { task, agent: 'exec:python3 a.py', agent_options: { model: spec } },
        );
      const name = field === 'agent' ? 'Agent' : 'Its model calls answered by';
      const passwd = await refusal(start('scripted:/etc/passwd'), 'scripted:/etc/passwd');
      expect(passwd).toMatch(new RegExp(`^${name}: TYPED is outside the folders stepbox reads files from`));
      // A file that exists and one that does not: the same words.
      expect(await refusal(start('scripted:/etc/shadow'), 'scripted:/etc/shadow')).toBe(passwd);
      expect(await refusal(start('scripted:/etc/no-such-file'), 'scripted:/etc/no-such-file')).toBe(passwd);
      // A symlink inside the task's folder that points out: refused as outside.
      expect(await refusal(start('scripted:link.jsonl'), 'scripted:link.jsonl')).toMatch(
        new RegExp(`^${name}: TYPED resolves to \\S+, which is outside the folders`),
      );
    }
    // The batch form: the same rule and the field named.
    const batch = (agent: string) =>
      client.batch.start({ tasks: [task], agent, episodes: 1, concurrency: 1 });
    const batchPasswd = await refusal(batch('scripted:/etc/passwd'), 'scripted:/etc/passwd');
    expect(batchPasswd).toMatch(/^Agent: TYPED is outside the folders stepbox reads files from/);
    expect(await refusal(batch('scripted:../../etc/shadow'), 'scripted:../../etc/shadow')).toMatch(
      /^Agent: TYPED resolves to /,
    );
    // Inside the places: read (the task's folder relative, the store absolute).
    const inFolder = await client.episode.start({ task, agent: 'scripted:ok.jsonl' });
    expect(inFolder.ok ? '' : inFolder.error.code).not.toBe('invalid_input');
    const inStore = await client.episode.start({
      task,
      agent: `scripted:${join(dir, 'store', 'mine.jsonl')}`,
    });
    expect(inStore.ok ? '' : inStore.error.code).not.toBe('invalid_input');
  });
});

describe('a refusal echoes a long path cut in the middle (elidePath)', () => {
  it('keeps the kind and the file, cut at a slash: a typed ../../…/etc/passwd made the refusal 8 lines at 1024', () => {
    const typed = 'scripted:../../../../../../../../../../etc/passwd';
    expect(elidePath(typed)).toBe('scripted:…/../../../../etc/passwd');
    expect(elidePath('/home/someone/projects/deep/inside/a/folder/script.jsonl')).toBe(
      '/home/…/a/folder/script.jsonl',
    );
    // Short paths whole; a file name with no slash to cut at is cut where it falls.
    expect(elidePath('scripted:agent.jsonl')).toBe('scripted:agent.jsonl');
    expect(elidePath(`scripted:/t/${'a'.repeat(40)}.jsonl`)).toBe(`scripted:/…${'a'.repeat(18)}.jsonl`);
    expect(outsideText('Agent', typed, '/etc/passwd', [{ name: 'the store', path: '/s' }])).toBe(
      'Agent: scripted:…/../../../../etc/passwd resolves to /etc/passwd, which is outside the folders stepbox reads files from (the store); pick the file with Choose… → Your folders to let stepbox read it, or give a path inside one of them',
    );
  });
});

describe('a message as the window says it (peopleText)', () => {
  const roots = pathRoots('/tmp/stepbox-share-vYB7tT', '/work/main/resources', [
    '/tmp/e2e-walk/umbrella/task.json',
  ]);

  it('says the host paths inside the window’s folders from there, the rest whole', () => {
    expect(
      peopleText(
        'Saved as case x (raises gave_up); finish its walkthrough in /tmp/stepbox-share-vYB7tT/cases/x/README.md',
        roots,
      ),
    ).toBe('Saved as case x (raises gave_up); finish its walkthrough in cases/x/README.md in the store');
    // The store in a sentence is a place, not a variable to expand (it read `$STEPBOX_HOME/shares/…`).
    expect(peopleText('Shared as /tmp/stepbox-share-vYB7tT/shares/ep-1.html (3.0 KiB)', roots)).toBe(
      'Shared as shares/ep-1.html in the store (3.0 KiB)',
    );
    expect(peopleText('nothing to read in /tmp/stepbox-share-vYB7tT.', roots)).toBe(
      'nothing to read in the store.',
    );
    expect(
      peopleText(
        'Agent: no file at /work/main/resources/tasks/hello-python/answers.jsonl — check the name or use Choose…',
        roots,
      ),
    ).toBe('Agent: no file at resources/tasks/hello-python/answers.jsonl — check the name or use Choose…');
    // A refusal's own subject stays whole (it is outside every folder: that is the message).
    expect(
      peopleText(
        "Agent: scripted:../../etc/passwd resolves to /etc/passwd, which is outside (the task's folder /work/main/resources/tasks/hello-python).",
        roots,
      ),
    ).toBe(
      "Agent: scripted:../../etc/passwd resolves to /etc/passwd, which is outside (the task's folder resources/tasks/hello-python).",
    );
    // An opened project by its own name; `scripted:/…` and a sentence's last dot.
    expect(peopleText('scripted:/tmp/e2e-walk/umbrella/a.jsonl.', roots)).toBe('scripted:umbrella/a.jsonl.');
    expect(pathForPeople('/tmp/e2e-walk/umbrella/task.json', roots)).toBe('umbrella/task.json');
    expect(
      pathForPeople('/tmp/e2e-walk/hello-file', pathRoots(null, null, ['/tmp/e2e-walk/hello-file'])),
    ).toBe('hello-file');
  });
});

describe('the start-form field an error names', () => {
  it("finds the field by the engine's lead and by the window's words for the CLI's", () => {
    expect(startFieldOf('Agent: no file at x.jsonl')).toBe('Agent');
    expect(startFieldOf('“Agent” "scripted:" needs a file after the colon: scripted:FILE.')).toBe('Agent');
    expect(startFieldOf('“Its model calls answered by” is needed: claude-code answers nothing itself.')).toBe(
      'Its model calls answered by',
    );
    expect(startFieldOf('the sandbox could not start')).toBeNull();
    expect(startFieldOf('An “Agent” field elsewhere in the sentence')).toBeNull();
  });
});
