import { describe, expect, it } from 'vitest';
import { callDetail } from '../../shared/step-summary.js';

describe('callDetail: the argument a person looks for first', () => {
  it("says a shell call's command line for every agent's shell tool, not its JSON", () => {
    expect(callDetail('execute_shell', { command: 'ls -la' })).toBe('ls -la');
    // Codex CLI's exec_command {cmd}, Claude Code's Bash {command, description}.
    expect(callDetail('exec_command', { cmd: 'wc -l notes/todo.txt' })).toBe('wc -l notes/todo.txt');
    expect(callDetail('Bash', { command: 'python3 greet.py World', description: 'Run it' })).toBe(
      'python3 greet.py World',
    );
  });
  it('else the path, key or query, else compact JSON', () => {
    expect(callDetail('write_file', { path: 'a.txt', content: 'x' })).toBe('a.txt');
    expect(callDetail('memory_read', { key: 'k' })).toBe('k');
    expect(callDetail('get_weather', { city: 'Beijing' })).toBe('{"city":"Beijing"}');
  });
});
