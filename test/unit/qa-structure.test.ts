import { describe, expect, it } from 'vitest';
import { checkStructure } from '../../shared/qa/structure.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const run = (events: TraceEvent[], torn = false) => checkStructure({ events, torn, task: qaTask() });

describe('structure rule', () => {
  it('accepts a well-formed trace', () => {
    const t = new QaTrace()
      .step({ calls: [sh('ls')] })
      .step({ final: 'done' })
      .end();
    expect(run(t.events())).toEqual([]);
  });
  it('accepts a fork whose first step is K+1', () => {
    const t = new QaTrace(undefined, { forkStep: 3 }).step({ calls: [sh('ls')] }).end();
    expect(run(t.events())).toEqual([]);
  });
  it('flags a missing end, a torn tail and a missing header', () => {
    const open = new QaTrace().step({ calls: [sh('ls')] }).events();
    expect(run(open).map((f) => f.message)).toEqual([expect.stringMatching(/no end event/)]);
    expect(run(open, true).some((f) => /torn/.test(f.message))).toBe(true);
    expect(run(open.slice(1))[0].message).toMatch(/header/);
  });
  it('does not flag the missing end of a branch a live process still writes', () => {
    const live = new QaTrace().step({ calls: [sh('ls')] }).events();
    expect(checkStructure({ events: live, torn: false, open: true, task: qaTask() })).toEqual([]);
  });
  it('flags a gap in steps and in event numbering', () => {
    const events = new QaTrace()
      .step({ calls: [sh('a')] })
      .step({ calls: [sh('b')] })
      .step({ final: 'x' })
      .end()
      .events();
    const noStep2 = events.filter((e) => e.step !== 2);
    const flags = run(noStep2);
    expect(flags.some((f) => /missing 2/.test(f.message) && f.step === 2)).toBe(true);
    expect(flags.some((f) => /numbering jumps/.test(f.message))).toBe(true);
  });
});
