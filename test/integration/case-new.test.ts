import { mkdtempSync, readFileSync, writeFileSync, cpSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseJsonOutput, PROJECT_ROOT, runCli } from '../support/cli.js';
import { describeDocker, exampleDir } from '../support/docker.js';
import { tempHome } from '../support/harness.js';

interface RunJson {
  episode: string;
  status: string;
}
interface NewJson {
  name: string;
  dir: string;
  agent: string;
  rules: string[];
  steps: number;
  copied: string[];
}
interface VerifyJson {
  ok: boolean;
  cases: { name: string; ok: boolean; broken: { raised: string[]; expected: string[] }; fixed: unknown }[];
}

let env: ReturnType<typeof tempHome>;
let work: string;
beforeAll(() => {
  env = tempHome();
  work = mkdtempSync(join(tmpdir(), 'stepbox-case-new-'));
});
afterAll(() => env?.cleanup());

const cli = (args: string[]) => runCli(args, { env: { STEPBOX_HOME: env.home }, timeoutMs: 120_000 });

describeDocker('stepbox case new → case verify, from each agent kind', () => {
  it('a scripted episode becomes a library case that verifies exactly, lists, exports and imports', async () => {
    const dir = join(PROJECT_ROOT, 'resources/cases/permission-gave-up');
    const run = await cli([
      'run',
      join(dir, 'task.json'),
      '--agent',
      `scripted:${join(dir, 'agent.jsonl')}`,
      '--json',
    ]);
    const ep = parseJsonOutput<RunJson>(run).episode;
    const made = parseJsonOutput<NewJson>(
      await cli(['case', 'new', ep, '--name', 'team-readonly', '--json']),
    );
    expect(made).toMatchObject({
      name: 'team-readonly',
      agent: 'scripted',
      rules: ['gave_up', 'unverified_success'],
      steps: 3,
    });
    expect(made.dir).toBe(join(env.home, 'cases', 'team-readonly'));
    // The walkthrough skeleton points at the flagged step for its author.
    expect(readFileSync(join(made.dir, 'README.md'), 'utf8')).toMatch(
      /Timeline, step 3\*\*: Gave up \(`gave_up`/,
    );
    const verify = await cli(['case', 'verify', 'team-readonly', '--json']);
    const v = parseJsonOutput<VerifyJson>(verify);
    expect(v.cases[0]).toMatchObject({ name: 'team-readonly', ok: true, fixed: null });
    expect(v.cases[0].broken.raised).toEqual(v.cases[0].broken.expected);
    expect(verify.code).toBe(0);
    // Listed beside the bundled cases, marked as the library's.
    const list = parseJsonOutput<{ cases: { name: string; origin: string }[] }>(
      await cli(['case', 'list', '--json']),
    );
    expect(list.cases.find((c) => c.name === 'team-readonly')?.origin).toBe('library');
    expect(list.cases.find((c) => c.name === 'output-flood')?.origin).toBe('bundled');
    // Exported as one file, imported under another name (a colleague's library).
    const file = join(work, 'team.case.json');
    expect((await cli(['case', 'export', 'team-readonly', '--out', file])).code).toBe(0);
    expect((await cli(['case', 'import', file, '--name', 'team-readonly-2'])).code).toBe(0);
    expect(existsSync(join(env.home, 'cases', 'team-readonly-2', 'agent.jsonl'))).toBe(true);
    // The same name again needs --force; a bundled name is refused.
    expect((await cli(['case', 'new', ep, '--name', 'team-readonly'])).code).toBe(2);
    const clash = await cli(['case', 'new', ep, '--name', 'output-flood']);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toMatch(/bundled case; choose another --name/);
  }, 300_000);

  it('an exec: episode becomes a case with its command, its program and the answers as its model', async () => {
    const dir = join(work, 'exec-agent');
    cpSync(exampleDir('python-stdlib'), dir, { recursive: true });
    const call = (id: string, args: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'run_tests', arguments: args } }],
    });
    writeFileSync(
      join(dir, 'model.jsonl'),
      [
        call('c1', '{}'),
        call('c2', '{"path": "."}'),
        { role: 'assistant', content: 'The notes look correct to me.' },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    const run = await cli([
      'run',
      dir,
      '--agent',
      'exec:python3 agent.py',
      '--model',
      `scripted:${join(dir, 'model.jsonl')}`,
      '--json',
    ]);
    const ep = parseJsonOutput<RunJson>(run).episode;
    const made = parseJsonOutput<NewJson>(await cli(['case', 'new', ep, '--name', 'team-exec', '--json']));
    expect(made).toMatchObject({
      agent: 'exec',
      rules: ['unknown_tool', 'unverified_success'],
      copied: ['agent.py'],
    });
    expect(JSON.parse(readFileSync(join(made.dir, 'agent.json'), 'utf8'))).toEqual({
      agent: 'exec:python3 agent.py',
      model: 'scripted:agent.jsonl',
    });
    const verify = await cli(['case', 'verify', 'team-exec', '--json']);
    const v = parseJsonOutput<VerifyJson>(verify);
    expect(v.cases[0].broken.raised).toEqual(['unknown_tool', 'unverified_success']);
    expect(v.ok).toBe(true);
  }, 300_000);
});
