import { describe, expect, it } from 'vitest';
import { checkFallbackAbuse } from '../../shared/qa/fallback-abuse.js';
import { checkMemoryCorruption } from '../../shared/qa/memory-corruption.js';
import type { TaskInput } from '../../shared/task.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const task: TaskInput = {
  name: 'weather',
  goal: 'Report the weather',
  tools: [
    'execute_shell',
    'memory_write',
    { name: 'weather', command: 'w {city}', writes_memory: { forecast: '' }, fallback: 'None' },
  ],
  memory: { initial: { forecast: 'sunny' }, writers: { weather: ['forecast'] }, nullable: ['scratch'] },
};
const input = (t: QaTrace) => ({ events: t.events(), torn: false, task: qaTask(t.task) });

describe('memory_corruption rule', () => {
  it('flags a fallback writing None over a value (detector run on old traces)', () => {
    const t = new QaTrace(task)
      .step({
        calls: [
          {
            name: 'weather',
            args: { city: 'Beijing' },
            memory: { key: 'forecast', before: 'sunny', after: 'None' },
          },
        ],
      })
      .end();
    const flags = checkMemoryCorruption(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'memory_corruption', step: 1, severity: 'error' });
  });
  it('uses the corruption the harness recorded', () => {
    const t = new QaTrace(task)
      .step({
        calls: [
          {
            name: 'weather',
            args: {},
            memory: { key: 'forecast', before: 1, after: 2, corruption: 'recorded reason' },
          },
        ],
      })
      .end();
    expect(checkMemoryCorruption(input(t))[0].message).toBe('recorded reason');
  });
  it('near miss: a real value, a nullable key or a first write of null are fine', () => {
    const t = new QaTrace(task)
      .step({
        calls: [{ name: 'weather', args: {}, memory: { key: 'forecast', before: 'sunny', after: 'rain' } }],
      })
      .step({
        calls: [{ name: 'memory_write', args: {}, memory: { key: 'scratch', before: 'x', after: null } }],
      })
      .step({
        calls: [{ name: 'memory_write', args: {}, memory: { key: 'fresh', before: null, after: 'None' } }],
      })
      .end();
    expect(checkMemoryCorruption(input(t))).toEqual([]);
  });
  it('flags an undeclared writer', () => {
    const t = new QaTrace(task)
      .step({ calls: [{ name: 'weather', args: {}, memory: { key: 'city', before: null, after: 'x' } }] })
      .end();
    expect(checkMemoryCorruption(input(t))[0].message).toMatch(/not a declared writer/);
  });
});

describe('fallback_abuse rule', () => {
  const fb = { name: 'weather', args: { city: 'x' }, result: { fallback: true, stdout: 'None' } };
  it('flags fallbacks in more than 30 % of calls', () => {
    const t = new QaTrace(task)
      .step({ calls: [fb] })
      .step({ calls: [fb] })
      .step({ calls: [sh('ls')] })
      .end();
    const flags = checkFallbackAbuse(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ step: 1, severity: 'warning' });
    expect(flags[0].evidence.rate).toBeCloseTo(2 / 3);
    // The limit as the task allows it, not its key (the window showed "qa.max_fallback_rate 30 %").
    expect(flags[0].message).toContain('more than the 30 % the task allows');
    expect(flags[0].message).not.toContain('qa.');
  });
  it('counts the calls so far while the episode runs, so the live flag and the end agree', () => {
    // The timeout case's walkthrough said "4 of 4" beside a live flag's "1 of 1" after step 1.
    const live = new QaTrace(task).step({ calls: [fb] });
    expect(checkFallbackAbuse(input(live))[0].message).toMatch(/^1 of 1 tool call so far \(100 %\)/);
    const ended = new QaTrace(task).repeat(4, { calls: [fb] }).end();
    expect(checkFallbackAbuse(input(ended))[0].message).toMatch(/^4 of 4 tool calls \(100 %\)/);
  });
  it('near miss: 3 fallbacks in 10 calls (exactly 30 %) is not abuse', () => {
    const t = new QaTrace(task)
      .repeat(3, { calls: [fb] })
      .repeat(7, { calls: [sh('ls')] })
      .end();
    expect(checkFallbackAbuse(input(t))).toEqual([]);
  });
  it('honours qa.max_fallback_rate', () => {
    const t = new QaTrace({ ...task, qa: { max_fallback_rate: 0.2 } })
      .repeat(3, { calls: [fb] })
      .repeat(7, { calls: [sh('ls')] })
      .end();
    expect(checkFallbackAbuse(input(t))).toHaveLength(1);
  });
});
