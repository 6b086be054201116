import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../electron/engine/sandbox/frames.js';
import { sha256Hex } from '../../electron/engine/sha256.js';
import { PROJECT_ROOT } from '../support/cli.js';

// The prelude's FrameReader fills a large frame (a restore's blobs: megabytes) in one buffer of
// its size, read straight from the fd. Held here against the host's encodeFrame without Docker:
// frames of every size around the threshold, cut at every kind of point, through feed() and
// through read() from a socket, decode to what was sent.

const PRELUDE = resolve(PROJECT_ROOT, 'resources/sandbox/prelude.py');

/** Frames sizes around LARGE_FRAME (256 KiB) and the head's edges, payload bytes from a seed. */
function frames(): Buffer[] {
  const sizes = [0, 1, 8, 1000, 262_136, 262_143, 262_144, 300_000, 1024 * 1024 + 1, 5];
  return sizes.map((n, i) => {
    const payload = Buffer.alloc(n);
    for (let j = 0; j < n; j += 4096) payload[j] = (i * 31 + j) & 0xff;
    return encodeFrame({ id: i, pad: 'x'.repeat(i % 2 ? 70_000 : 3) }, payload);
  });
}

/** What the Python side decoded, per frame: its header's id and the sha256 of its payload. */
function decodeInPython(stream: Buffer, how: 'feed' | 'read'): { id: number; sha: string; type: string }[] {
  const script = [
    'import hashlib, importlib.util, json, os, random, socket, sys, threading',
    `spec = importlib.util.spec_from_file_location('prelude', ${JSON.stringify(PRELUDE)})`,
    'p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)',
    'data = sys.stdin.buffer.read()',
    'random.seed(7)',
    'cuts = lambda: random.choice([1, 7, 8, 9, 4096, 65536, 262144, 1 << 20])',
    'r = p.FrameReader(1 << 20, 1 << 23)',
    'out = []',
    `if ${JSON.stringify(how)} == 'feed':`,
    '    pos = 0',
    '    while pos < len(data):',
    '        k = cuts(); out += r.feed(data[pos:pos + k]); pos += k',
    'else:',
    '    a, b = socket.socketpair()',
    '    def send():',
    '        pos = 0',
    '        while pos < len(data):',
    '            k = cuts(); a.sendall(data[pos:pos + k]); pos += k',
    '        a.close()',
    '    t = threading.Thread(target=send); t.start()',
    '    while True:',
    '        got = r.read(b.fileno())',
    '        if got is None: break',
    '        out += got',
    '    t.join()',
    'assert not r.pending',
    "print(json.dumps([{'id': h['id'], 'sha': hashlib.sha256(pl).hexdigest(), 'type': type(pl).__name__} for h, pl in out]))",
  ].join('\n');
  const r = spawnSync('python3', ['-I', '-c', script], { input: stream, encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { id: number; sha: string; type: string }[];
}

describe("the prelude's FrameReader: large frames filled in place", () => {
  const sent = frames();
  const expected = sent.map((f, id) => ({ id, sha: sha256Hex(f.subarray(8 + f.readUInt32BE(0))) }));
  const stream = Buffer.concat(sent);

  for (const how of ['feed', 'read'] as const)
    it(`${how}(): every frame, cut anywhere, decodes to what the host encoded`, () => {
      const got = decodeInPython(stream, how);
      expect(got.map(({ id, sha }) => ({ id, sha }))).toEqual(expected);
      // The 1 MiB one (never in one piece: cuts are at most 1 MiB) is handed on in the buffer it
      // was filled in, not copied out of it; frames under the threshold are parsed as before.
      expect(got[8].type).toBe('bytearray');
      expect(got.filter((g) => g.id < 4 || g.id === 9).map((g) => g.type)).toEqual(Array(5).fill('bytes'));
    });

  it('read_some hands each read out as bytes of its own, never the buffer it read into', () => {
    // Every unknown-length read shares one buffer: what a read answered must survive the next.
    const script = [
      'import importlib.util, os',
      `spec = importlib.util.spec_from_file_location('prelude', ${JSON.stringify(PRELUDE)})`,
      'p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)',
      'r, w = os.pipe()',
      "os.write(w, b'first')",
      'a = p.read_some(r)',
      "os.write(w, b'SECOND-longer')",
      'b = p.read_some(r)',
      'os.close(w)',
      'print(repr(a), repr(b), repr(p.read_some(r)), type(a).__name__)',
    ].join('\n');
    const r = spawnSync('python3', ['-I', '-c', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe("b'first' b'SECOND-longer' b'' bytes");
  });

  it('refuses a frame longer than the channel allows before reading its body', () => {
    const script = [
      'import importlib.util',
      `spec = importlib.util.spec_from_file_location('prelude', ${JSON.stringify(PRELUDE)})`,
      'p = importlib.util.module_from_spec(spec); spec.loader.exec_module(p)',
      'r = p.FrameReader(1024, 1 << 20)',
      'try:',
      '    r.feed(p.FRAME_HEAD.pack(10, (1 << 20) + 1))',
      "except p.FrameError as e: print('refused:', e)",
    ].join('\n');
    const r = spawnSync('python3', ['-I', '-c', script], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/^refused: a frame of 10\+1048577 bytes/);
  });
});
