import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runsOwnProgramKind } from '../../shared/agent-kind.js';
import { AGENT_DRIVERS, agentTraitsOf, driverOf } from '../../electron/engine/agents/agent-driver.js';
import { AgentTraits } from '../../shared/contract/models.js';
import { caseRefusal, selectPersonDecides } from '../../renderer/src/stores/stepper/agent-traits.js';
import { PROJECT_ROOT } from '../support/cli.js';

/**
 * Issue 34.4: the engine asks an agent what it needs (its `needs`: start inside the
 * sandbox, re-execute, a process, a position) or a kind's driver (agent-driver.ts: rewind,
 * replay, how its recordings are read), never tests a kind by name. A check like
 * `kind === 'exec'`, a list of kinds, `spec.startsWith('sandbox:')` or `'consumed' in agent`
 * is how "agents by special case" came about; this scan fails when one comes back outside
 * the places that define the kinds.
 */

/** Where kinds are named on purpose: the agents themselves, the factory that builds them by spec, the spec predicates the window shares. */
const ALLOWED = [
  /^electron\/engine\/agents\//,
  /^electron\/engine\/agent-factory\.ts$/,
  /^shared\/agent-kind\.ts$/,
];

/** Every agent kind and spec form a check could name (recipes, `recipe` and an import's `atif` included). */
const KINDS = [...Object.keys(AGENT_DRIVERS), 'recipe', 'codex', 'claude-code', 'atif'];
const KIND = `(?:${KINDS.map((k) => k.replace('-', '\\-')).join('|')})`;

/** An operand naming an agent's kind: `x.kind`, `agentKind`, `agent_kind`, `summary.agent` (not a helper channel's kind). */
const KIND_OPERAND = String.raw`(?:[\w$.?\]\)]*\.)?(?:kind|agentKind|agent_kind|agent)`;

const CHECKS: readonly [string, RegExp][] = [
  ['compares a kind with a name', new RegExp(String.raw`${KIND_OPERAND}\s*[!=]==?\s*'${KIND}'`)],
  ['compares a name with a kind', new RegExp(String.raw`'${KIND}'\s*[!=]==?\s*${KIND_OPERAND}\b`)],
  ['tests a spec for a kind prefix', new RegExp(String.raw`startsWith\(\s*'${KIND}:'\s*\)`)],
  ['lists kinds', new RegExp(String.raw`'${KIND}'\s*,\s*'${KIND}'`)],
  [
    'tests an agent for a member',
    /'\w+'\s+in\s+(?:this\.)?(?:agent|source|then|from\.agent)\b|as\s*\{\s*consumed\?/,
  ],
];

/** Lines that talk of something else by the same word: the helper's channel (`exec`), its operations. */
const OTHER_KINDS = /channel|HELPER_CHANNEL|choice ===|op ===|HelperResponse|helper_channel/;

/** Every .ts and .tsx source under `dir` (built output left out). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'dist' || name === 'node_modules' ? [] : sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The code of a line, without a trailing `//` comment (a comment may name kinds). */
function code(line: string): string {
  const trimmed = line.trim();
  if (trimmed.startsWith('*') || trimmed.startsWith('/*') || trimmed.startsWith('//')) return '';
  return line.replace(/\s\/\/.*$/, '');
}

/** A switch on an agent's kind (`switch (agent.kind)`), up to its first case naming a kind. */
const KIND_SWITCH = new RegExp(
  String.raw`switch\s*\(\s*${KIND_OPERAND}\s*\)\s*\{[^]*?case\s+'${KIND}'\s*:`,
  'g',
);

/** The kind checks in `text`, one line each: `why: line`. */
function kindChecks(text: string): string[] {
  const lines = text.split('\n').flatMap((raw, i) => {
    const line = code(raw);
    if (!line || OTHER_KINDS.test(line)) return [];
    return CHECKS.filter(([, re]) => re.test(line)).map(([why]) => `${i + 1}: ${why}: ${line.trim()}`);
  });
  const switches = [...text.matchAll(KIND_SWITCH)].map(
    (m) => `${text.slice(0, m.index).split('\n').length}: switches on a kind: ${m[0].split('\n')[0].trim()}`,
  );
  return [...lines, ...switches];
}

describe('agent kinds', () => {
  it('no file outside the agents folder and the factory checks an agent kind by name (the window included)', () => {
    // The window asks a branch's `agent_traits` (who decides, whether a case can replay it).
    const offenders = [
      ...sources(join(PROJECT_ROOT, 'electron')),
      ...sources(join(PROJECT_ROOT, 'shared')),
      ...sources(join(PROJECT_ROOT, 'renderer', 'src')),
    ]
      .map((path) => relative(PROJECT_ROOT, path).split('\\').join('/'))
      .filter((path) => !ALLOWED.some((a) => a.test(path)))
      .flatMap((path) =>
        kindChecks(readFileSync(join(PROJECT_ROOT, path), 'utf8')).map((c) => `${path}:${c}`),
      );
    expect(offenders).toEqual([]);
  });

  it('the scan finds each kind of check it is there to refuse', () => {
    expect(kindChecks("if (header.agent.kind === 'manual') x();")).toHaveLength(1);
    expect(kindChecks("if ('exec' !== agentKind) x();")).toHaveLength(1);
    expect(kindChecks("const sameSpec = spec.startsWith('sandbox:');")).toHaveLength(1);
    expect(kindChecks("const FIXED = new Set(['scripted', 'replay']);")).toHaveLength(1);
    expect(kindChecks("switch (header.agent.kind) {\n  case 'exec':\n    return 1;\n}")).toHaveLength(1);
    expect(kindChecks("return 'consumed' in this.source ? 1 : 0;")).toHaveLength(1);
    expect(kindChecks('const c = (agent as { consumed?: () => number }).consumed;')).toHaveLength(1);
    // The helper's exec channel and the Gemini API are no agents, and a comment may name kinds.
    expect(kindChecks("switch (api) {\n  case 'gemini':\n    return 1;\n}")).toEqual([]);
    expect(kindChecks("if (sandbox.channel.kind === 'exec') log();")).toEqual([]);
    expect(kindChecks("  // an exec agent's kind === 'exec'")).toEqual([]);
  });

  it('the scan reads the window too: a manual agent named in a .tsx is found', () => {
    expect(
      kindChecks("const manual = useSlice('stepper', (s) => s.view?.summary.agent === 'manual');"),
    ).toHaveLength(1);
    expect(kindChecks("  if (s.kind === 'atif')")).toHaveLength(1);
    expect(sources(join(PROJECT_ROOT, 'renderer', 'src')).some((p) => p.endsWith('inject-panel.tsx'))).toBe(
      true,
    );
  });

  it('a branch summary says what its agent is from the driver table (agent_traits)', () => {
    expect(agentTraitsOf('manual')).toEqual({ decides: 'person', as_case: 'script' });
    expect(agentTraitsOf('sandbox')).toEqual({ decides: 'program', as_case: null });
    expect(agentTraitsOf('atif')).toEqual({ decides: 'unknown', as_case: null });
    for (const kind of Object.keys(AGENT_DRIVERS))
      expect(AgentTraits.parse(agentTraitsOf(kind)), kind).toEqual({
        decides: driverOf(kind).decides,
        as_case: driverOf(kind).asCase,
      });
    // What the window says before Save as case is clicked follows the traits, not a kind's name.
    expect(caseRefusal(agentTraitsOf('sandbox'))).toMatch(/ran its own program inside the sandbox/);
    expect(caseRefusal(agentTraitsOf('atif'))).toMatch(/imported trace/);
    expect(caseRefusal(agentTraitsOf('scripted'))).toBeNull();
    expect(caseRefusal(undefined)).toBeNull();
    expect(selectPersonDecides({ view: null })).toBe(false);
  });

  it("the window's kind predicate agrees with the driver table", () => {
    for (const kind of Object.keys(AGENT_DRIVERS))
      expect(runsOwnProgramKind(kind), kind).toBe(driverOf(kind).runsRecordedCommand);
    expect(runsOwnProgramKind('no-such-kind')).toBe(driverOf('no-such-kind').runsRecordedCommand);
  });
});
