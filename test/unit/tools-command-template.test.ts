import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandTemplate } from '../../shared/command-template.js';
import { parseTask } from '../../shared/task.js';
import { fillTemplate } from '../../electron/engine/tools/custom-tool.js';

const dir = mkdtempSync(join(tmpdir(), 'stepbox-template-'));
const mark = join(dir, 'pwned');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Values an agent might send, each trying to run `touch MARK` or break the word. */
const HOSTILE = [
  `$(touch ${mark})`,
  `\`touch ${mark}\``,
  `'; touch ${mark}; '`,
  `"; touch ${mark}; "`,
  `x\ntouch ${mark}`,
  `x; touch ${mark}`,
  `x | touch ${mark}`,
  `x && touch ${mark}`,
  `x & touch ${mark}`,
  `a[$(touch ${mark})]`,
  `\\'$(touch ${mark})`,
  `'"'"'$(touch ${mark})`,
  '*',
  '~',
  '$HOME',
  '{q}',
  '',
  "it's",
  ' leading and trailing ',
];

function taskWith(command: string) {
  return parseTask({
    name: 't',
    goal: 'g',
    tools: [
      {
        name: 'probe',
        command,
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
      },
    ],
  });
}

/**
 * Fills `template` with each value and runs them all in one bash (one process per template,
 * not per value: spawning ~170 shells from a test worker took minutes on a loaded machine).
 * Each filled command runs in its own subshell; NUL bytes separate their outputs.
 */
function runFilled(template: string, values: readonly string[]): string[] {
  const parsed = parseCommandTemplate(template, ['q']);
  if (!parsed.ok) throw new Error(parsed.message);
  const script = values.map((q) => `(\n${fillTemplate(parsed.parts, { q })}\n)\nprintf '\\0'`).join('\n');
  const out = execFileSync('/bin/bash', ['-c', script], { encoding: 'utf8', cwd: dir });
  return out.split('\0').slice(0, values.length);
}

describe('custom-tool command templates', () => {
  // Every accepted position: the value arrives as exactly its bytes and runs nothing.
  const ACCEPTED: [string, (v: string) => string][] = [
    [`printf '[%s]' {q}`, (v) => `[${v}]`],
    [`printf '[%s]' pre{q}post`, (v) => `[pre${v}post]`],
    [`printf '[%s]' --q={q}`, (v) => `[--q=${v}]`],
    [`printf '[%s]' {q}{q}`, (v) => `[${v}${v}]`],
    [`x={q}; printf '[%s]' "$x"`, (v) => `[${v}]`],
    [`printf '[%s]' "$(printf %s {q})"`, (v) => `[${v}]`],
    [`printf '[%s]' "$(printf %s {q} | cat)" | cat`, (v) => `[${v}]`],
    [`printf '[%s]' {q} # a comment after it`, (v) => `[${v}]`],
    [`awk 'BEGIN{printf "[%s]", ARGV[1]}' {q}`, (v) => `[${v}]`],
  ];
  for (const [template, expected] of ACCEPTED) {
    it(`passes hostile values literally through: ${template}`, () => {
      expect(taskWith(template).ok).toBe(true);
      const outputs = runFilled(template, HOSTILE);
      HOSTILE.forEach((value, i) => expect(outputs[i], JSON.stringify(value)).toBe(expected(value)));
      expect(existsSync(mark), `${template} with a hostile value ran a command`).toBe(false);
    });
  }

  // Every place where one shell-quoted word is not enough is refused at task load.
  const REFUSED: [string, RegExp][] = [
    [`echo "{q}"`, /double quotes/],
    [`echo "prefix {q} suffix"`, /double quotes/],
    [`echo '{q}'`, /single quotes/],
    [`echo $'{q}'`, /ANSI-C quotes/],
    [`echo \`echo {q}\``, /backticks/],
    [`echo "$(echo "{q}")"`, /double quotes/],
    [`echo ok # {q}`, /comment/],
    [`cat <<EOF\n{q}\nEOF`, /here-document/],
    [`cat <<-'END'\n\tline {q}\nEND`, /here-document/],
    [`echo $(( {q} + 1 ))`, /arithmetic/],
    [`(( {q} > 1 )) && echo big`, /arithmetic/],
    [`[[ {q} -eq 1 ]] && echo one`, /arithmetic/],
    [`echo \${x:-{q}}`, /parameter expansion/],
    [`eval {q}`, /evaluates them/],
    [`eval "$(true)" {q}`, /evaluates them/],
    [`x=1 eval echo {q}`, /evaluates them/],
    [`let n={q}`, /evaluates them/],
    [`declare -a arr={q}`, /evaluates them/],
    [`{q} --help`, /command name/],
    [`echo ok; {q}`, /command name/],
    [`echo ok | {q}`, /command name/],
    [`if {q}; then echo y; fi`, /command name/],
    [`echo $({q})`, /command name/],
    [`echo "{q}`, /double quotes/],
  ];
  for (const [template, why] of REFUSED) {
    it(`refuses a placeholder where quoting cannot protect it: ${JSON.stringify(template)}`, () => {
      const task = taskWith(template);
      expect(task.ok).toBe(false);
      if (task.ok) return;
      expect(task.error.code).toBe('invalid_task');
      expect(task.error.message).toMatch(why);
      // The message names the tool, the placeholder and the fix.
      expect(task.error.message).toContain('tools.0.command ("probe")');
      expect(task.error.message).toContain('{q}');
      expect(task.error.message).toMatch(/bare word outside quotes/);
    });
  }

  it('leaves braces that are not declared parameters alone, even inside quotes', () => {
    expect(taskWith(`awk '{print $1}' f {q}`).ok).toBe(true);
    expect(taskWith(`echo "{other}" {q} \${HOME}`).ok).toBe(true);
  });

  it('refuses an unterminated quote with a clear message', () => {
    const parsed = parseCommandTemplate(`echo 'abc`, ['q']);
    expect(parsed).toEqual({ ok: false, message: expect.stringMatching(/unterminated quote/) });
  });

  it('accepts the bundled tasks and cases as written', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const root = join(__dirname, '../../resources');
    const files = [
      ...readdirSync(join(root, 'tasks')).map((d) => join(root, 'tasks', d, 'task.json')),
      ...readdirSync(join(root, 'cases')).flatMap((d) => [
        join(root, 'cases', d, 'task.json'),
        join(root, 'cases', d, 'fixed', 'task.json'),
      ]),
    ].filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) {
      const r = parseTask(JSON.parse(readFileSync(f, 'utf8')), f);
      expect(r.ok ? 'ok' : r.error.message).toBe('ok');
    }
  });
});
