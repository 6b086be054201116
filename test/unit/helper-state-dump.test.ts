import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

const HELPER = resolve(PROJECT_ROOT, 'resources/sandbox/helper.py');

/** Runs `body` in python3 with the helper imported as `h` (imported, it only defines); its stdout as JSON. */
function python(body: string): unknown {
  const script = [
    'import importlib.util, json, random, signal, subprocess, sys',
    `spec = importlib.util.spec_from_file_location('helper', ${JSON.stringify(HELPER)})`,
    'h = importlib.util.module_from_spec(spec)',
    'spec.loader.exec_module(h)',
    body,
  ].join('\n');
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as unknown;
}

// The session's state comes back from each call's shell as `export -p` on a pipe the command
// can write to itself (it can replace the exit trap), so the helper's parser reads
// agent-written bytes: it must give bash's own dumps back exactly and end on anything else.
describe("the helper's state-dump parser (resources/sandbox/helper.py parse_export_p)", () => {
  it("reads bash's own export -p back exactly, whatever the values hold", () => {
    const got = python(`
values = {'PLAIN': 'a b', 'QUOTES': 'say "hi" and \\'bye\\'', 'DOLLAR': '$HOME \`x\` \\\\ end\\\\',
          'LINES': 'one\\ntwo\\n', 'CTRL': 'tab\\there\\x01\\x1b[0m', 'UNI': 'żółw ✓ 🐢', 'EMPTY': ''}
out = subprocess.run(['bash', '-c', 'export -p'], env=values, capture_output=True).stdout
parsed = h.parse_export_p(out)
print(json.dumps({'given': values, 'read': {k: parsed.get(k) for k in values}}))
`) as { given: Record<string, string>; read: Record<string, string> };
    expect(Object.keys(got.given)).toHaveLength(7);
    expect(got.read).toEqual(got.given);
  });

  it('ends on any bytes, without raising (seeded fuzz of fragments of dumps)', () => {
    // 'x\\ndeclare -' once sent the scan back to the start forever; a cut \\ or \\c escape
    // and a \\U past U+10FFFF raised.
    const got = python(`
toks = [b'declare -x ', b'declare -', b'declare -ax ', b'FOO', b'=', b'"', b"$'", b'\\\\', b'\\n', b' ',
        b"'", b'\\\\x4', b'\\\\u12', b'\\\\U7fffffff', b'\\\\0', b'\\\\c', b'a', b'\\xff']
def late(*_):
    raise TimeoutError()
signal.signal(signal.SIGALRM, late)
rng = random.Random(20261202)
bad = None
for _ in range(30000):
    d = b''.join(rng.choice(toks) for _ in range(rng.randint(0, 12)))
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        h.parse_export_p(d)
    except BaseException as e:
        bad = [repr(d), type(e).__name__]
        break
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps(bad))
`);
    expect(got).toBeNull();
  });
});
