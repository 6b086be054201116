import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  currentProcessIdentity,
  isProcessGone,
  pidExists,
  processStartTime,
  type ProcessIdentity,
} from '../../electron/engine/process-identity.js';

const me = currentProcessIdentity();
const deadPid = () => spawnSync('true').pid!;

describe('isProcessGone', () => {
  it('keeps this process and another live one, under either foreign-host rule', () => {
    const parent: ProcessIdentity = { ...me, pid: process.ppid, start_time: processStartTime(process.ppid) };
    for (const rule of ['gone', 'alive'] as const) {
      expect(isProcessGone(me, rule)).toBe(false);
      expect(isProcessGone(parent, rule)).toBe(false);
    }
  });

  it('judges a dead pid, a reused pid and another boot gone, under either rule', () => {
    for (const rule of ['gone', 'alive'] as const) {
      expect(isProcessGone({ ...me, pid: deadPid() }, rule)).toBe(true);
      expect(isProcessGone({ ...me, start_time: `${me.start_time}0` }, rule)).toBe(true);
      if (me.boot_id !== null) expect(isProcessGone({ ...me, boot_id: 'another-boot' }, rule)).toBe(true);
    }
  });

  it('judges a process of another host by the rule it is given, whatever its pid', () => {
    for (const pid of [process.pid, deadPid()]) {
      const foreign = { ...me, pid, host: `${me.host}-elsewhere` };
      expect(isProcessGone(foreign, 'gone')).toBe(true);
      expect(isProcessGone(foreign, 'alive')).toBe(false);
    }
  });
});

describe('pidExists', () => {
  it('finds this process, and never a process group or a non-pid read from a file (0 was "alive" forever)', () => {
    expect(pidExists(process.pid)).toBe(true);
    for (const pid of [0, -1, -process.pid, 1.5, Number.NaN]) expect(pidExists(pid)).toBe(false);
  });
});
