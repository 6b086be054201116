import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadHarborTask } from '../../electron/engine/harness/harbor-task.js';
import { readDevcontainer } from '../../electron/engine/harness/devcontainer.js';
import { parseTask } from '../../shared/task.js';
import { cappedLines, KEY_SHOWN_CHARS, MOST_LINES, shownKey } from '../../shared/validation-issues.js';

// A file's author makes as many keys as they like, named as they like: a task.toml with 50,000
// unknown keys printed 50,000 notes, and a key holding ESC or a newline reached the terminal.

const MANY = 50_000;
/** A key that would clear the screen and forge a line of its own, and go on for 10,000 characters. */
const HOSTILE = `\u001b[2J\nwarning: all good${'x'.repeat(10_000)}`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-keys-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Every line of `lines` is bounded and plain: no control character, no key past its cap. */
function expectTame(lines: readonly string[]): void {
  // eslint-disable-next-line no-control-regex -- what must not reach the terminal
  for (const l of lines) expect(l).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  for (const l of lines) expect(l.length).toBeLessThan(400);
}

describe('notes and errors about a file’s keys are capped', () => {
  it('cappedLines names the first MOST_LINES and counts the rest; shownKey escapes and cuts', () => {
    const keys = Array.from({ length: MANY }, (_, i) => `k${i}`);
    const lines = cappedLines(keys, (k) => `unknown ${k}`, 'unknown key');
    expect(lines).toHaveLength(MOST_LINES + 1);
    expect(lines[MOST_LINES]).toBe(`and ${MANY - MOST_LINES} more unknown keys`);
    expect(cappedLines(keys.slice(0, MOST_LINES + 1), String, 'unknown key').at(-1)).toBe(
      'and 1 more unknown key',
    );
    expect(cappedLines(keys.slice(0, MOST_LINES), String, 'unknown key')).toHaveLength(MOST_LINES);
    expect(shownKey(HOSTILE)).toBe(`\\u001b[2J\\u000awarning: all good${'x'.repeat(KEY_SHOWN_CHARS - 32)}…`);
    expect(shownKey('retries')).toBe('retries');
  });

  it('task.toml: 50,000 unknown keys make 20 notes and a count; a hostile key is escaped and cut', () => {
    const task = join(dir, 'harbor');
    mkdirSync(join(task, 'tests'), { recursive: true });
    writeFileSync(join(task, 'instruction.md'), 'Do it.\n');
    writeFileSync(join(task, 'tests', 'test.sh'), 'echo 1 > /logs/verifier/reward.txt\n');
    const unknown = Array.from({ length: MANY }, (_, i) => `k${i} = 1`).join('\n');
    writeFileSync(
      join(task, 'task.toml'),
      `${JSON.stringify(HOSTILE)} = 1\n${unknown}\n[environment]\ndocker_image = "stepbox-sandbox:2"\ngpus = 1\n${JSON.stringify(HOSTILE)} = 2\n`,
    );
    const r = loadHarborTask(task);
    if (!r.ok) throw new Error(r.error.message);
    const notes = r.value.notes;
    expect(notes.length).toBeLessThanOrEqual(MOST_LINES + 2);
    expect(notes).toContain(`and ${MANY + 2 - MOST_LINES} more unknown keys`);
    expect(notes[1]).toBe(`task.toml: unknown key "${shownKey(HOSTILE)}" (not one of Harbor's); ignored`);
    expect(notes).toContain('task.toml: [environment] gpus is not honoured by stepbox; ignored');
    expectTame(notes);
  });

  it('devcontainer.json: unknown keys, build keys and substituted variables are each capped', () => {
    const project = join(dir, 'project');
    mkdirSync(join(project, '.devcontainer'), { recursive: true });
    const doc: Record<string, unknown> = { image: 'node:20', forwardPorts: [3000], toString: 1 };
    const build: Record<string, unknown> = { dockerfile: 'Dockerfile' };
    const env: Record<string, string> = {};
    doc[HOSTILE] = 1;
    for (let i = 0; i < MANY; i++) doc[`k${i}`] = i;
    for (let i = 0; i < 100; i++) build[`b${i}`] = i;
    for (let i = 0; i < 100; i++) env[`V${i}`] = '${localEnv:HOME}';
    writeFileSync(join(project, '.devcontainer', 'Dockerfile'), 'FROM node:20\n');
    writeFileSync(
      join(project, '.devcontainer', 'devcontainer.json'),
      JSON.stringify({ ...doc, build, containerEnv: env }),
    );
    const r = readDevcontainer(project, { goal: 'g' });
    if (!r.ok) throw new Error(r.error.message);
    const notes = r.value.notes;
    const file = join(project, '.devcontainer', 'devcontainer.json');
    expect(notes.length).toBeLessThanOrEqual(1 + 1 + 3 * (MOST_LINES + 1));
    expect(notes).toContain(`warning: ${file}: and ${MANY + 2 - MOST_LINES} more unknown keys`);
    expect(notes).toContain(`warning: ${file}: and ${100 - MOST_LINES} more build keys`);
    expect(notes).toContain(`warning: ${file}: and ${100 - MOST_LINES} more substituted variables`);
    // A key of Object's prototype is a key like any other, never its function's source.
    expect(notes).toContain(
      `warning: ${file}: "toString" is not honoured (stepbox does not know it); it is left out`,
    );
    expect(notes.some((n) => n.includes('"forwardPorts" is not honoured (the sandbox has no network)'))).toBe(
      true,
    );
    expectTame(notes);
  });

  it('task.json: 50,000 unknown keys are one error of 20 named keys and a count', () => {
    const doc: Record<string, unknown> = { name: 't', goal: 'g', [HOSTILE]: 1 };
    for (let i = 0; i < MANY; i++) doc[`k${i}`] = i;
    const r = parseTask(doc, 'task.json');
    if (r.ok) throw new Error('expected an error');
    const lines = r.error.message.split('\n');
    expect(lines).toHaveLength(1 + MOST_LINES + 1);
    expect(lines[0]).toBe('task.json is not a valid task:');
    expect(lines.at(-1)).toBe(`  and ${MANY + 1 - MOST_LINES} more problems`);
    expect(lines[1]).toMatch(
      /^ {2}\\u001b\[2J\\u000awarning: all goodx+…: unknown key \(allowed: name, goal/,
    );
    expectTame(lines);
  });
});
