import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportCase, importCase, importCaseFile } from '../../electron/engine/cases/case-bundle.js';
import { runCli } from '../support/cli.js';

// Item 4 of issue 31: `case import` streams a bundle (each file to disk as it is read), so
// memory stays bounded whatever the file sizes; what it unpacks is exactly what the
// in-memory import of the same JSON unpacks.

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every file under `dir` with its bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) {
      const p = relative(dir, join(e.parentPath, e.name));
      if (!p.startsWith('.imported')) out[p] = readFileSync(join(dir, p)).toString('base64');
    }
  return out;
}

describe('case import, streamed', () => {
  it('unpacks exactly what JSON.parse + importCase unpacks: escapes, unicode, surrogates, base64', () => {
    const bundle = exportCase('output-flood');
    const tricky = {
      ...bundle,
      files: {
        ...bundle.files,
        'notes/a.txt': { text: 'tab\there "quoted" back\\slash /slash\nline2 é 中文 😀 \u0001\u001f' },
        'notes/b.bin': { base64: Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]).toString('base64') },
        'notes/c.txt': { text: '' },
        // Read as Buffer.from(s, 'base64') reads them: both alphabets, characters outside
        // them skipped, the first "=" ends the content, an incomplete last group kept.
        'notes/d.bin': { base64: 'QUJD QU-_\nQQ==QUJD' },
        'notes/e.bin': { base64: 'QUJDQUI' },
        'notes/f.bin': { base64: 'QUJDQ' },
        'notes/g.bin': { base64: '=QUJD' },
        'notes/h.bin': { base64: 'QU=I!' },
      },
    };
    // Escaped forms JSON.stringify does not write: \/, \u-escaped astral pairs and a lone surrogate.
    const json = JSON.stringify(tricky)
      .replace('/slash', '\\/slash')
      .replace('😀', '\\ud83d\\ude00 \\ud83d x \\u00e9');
    const file = join(temp('stepbox-cb-'), 'b.case.json');
    writeFileSync(file, `  ${json}\n`);
    const streamed = importCaseFile(file, { library: temp('stepbox-lib-'), name: 'tricky' });
    const parsed = importCase(JSON.parse(json), { library: temp('stepbox-lib-'), name: 'tricky' });
    expect(tree(streamed.dir)).toEqual(tree(parsed.dir));
    expect(readFileSync(join(streamed.dir, 'notes/a.txt'), 'utf8')).toContain('😀 \ufffd x é');
  });

  it('refuses what is not a case bundle, naming what and where, and leaves nothing in the library', () => {
    const library = temp('stepbox-lib-');
    const base = JSON.stringify(exportCase('output-flood'));
    const cases: [string, string, RegExp][] = [
      ['unknown key', base.replace('"files"', '"extra":"x","files"'), /unknown key "extra"/],
      [
        'path out',
        base.replace('"task.json"', '"../task.json"'),
        /"\.\.\/task\.json" would leave the case folder/,
      ],
      [
        'both',
        base.replace(/"README\.md":\{"text"/, '"README.md":{"base64":"","text"'),
        /both text and base64/,
      ],
      ['neither', base.replace(/\}\}$/, ',"x.txt":{}}}'), /"x\.txt" has neither text nor base64/],
      ['number', base.replace(/"name":"[^"]*"/, '"name":5'), /a value starting with "5" at name/],
      ['truncated', base.slice(0, base.length - 40), /ends early/],
      ['trailing', `${base} {}`, /text after the document/],
      ['not json', 'hello', /a value starting with "h"/],
      ['format', base.replace('stepbox.case/1', 'other/1'), /format "other\/1" is not stepbox\.case\/1/],
      ['no task', base.replace('"task.json"', '"task2.json"'), /no task\.json or expected\.json/],
    ];
    for (const [what, text, message] of cases) {
      const file = join(temp('stepbox-cb-'), 'bad.case.json');
      writeFileSync(file, text);
      expect(() => importCaseFile(file, { library }), what).toThrow(message);
    }
    expect(readdirSync(library)).toEqual([]);
    expect(() => importCaseFile(join(library, 'missing.json'), { library })).toThrow(/no such bundle file/);
  });

  it('a bundle holding one 200 MB file is imported with a peak memory under 200 MB (the CLI, in its own process)', async () => {
    const dir = temp('stepbox-big-');
    const file = join(dir, 'big.case.json');
    const bundle = exportCase('output-flood');
    // Written in pieces: the test itself never holds the bundle either.
    const fd = openSync(file, 'w');
    const head = JSON.stringify({ format: bundle.format, name: 'big-one', files: bundle.files });
    writeSync(fd, `${head.slice(0, -2)},"data/big.bin":{"base64":"`);
    const piece = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < piece.length; i++) piece[i] = (i * 7919) % 251;
    const hash = createHash('sha256');
    const SIZE = 200 * 1024 * 1024;
    for (let written = 0; written < SIZE; written += piece.length) {
      const part = piece.subarray(0, Math.min(piece.length, SIZE - written));
      hash.update(part);
      writeSync(fd, part.toString('base64'));
    }
    writeSync(fd, '"}}}');
    closeSync(fd);
    const hwm = join(dir, 'hwm.mjs');
    writeFileSync(
      hwm,
      "import { readFileSync, writeSync } from 'node:fs';\n" +
        "process.on('exit', () => writeSync(2, 'VMHWM ' + /VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1] + '\\n'));\n",
    );
    const home = temp('stepbox-home-');
    const r = await runCli(['case', 'import', file, '--json'], {
      env: { STEPBOX_HOME: home, NODE_OPTIONS: `--import=${hwm}` },
      timeoutMs: 180_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const peakKb = Number(/VMHWM (\d+)/.exec(r.stderr)?.[1]);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb * 1024).toBeLessThan(200 * 1024 * 1024);
    const out = join(home, 'cases', 'big-one', 'data', 'big.bin');
    expect(statSync(out).size).toBe(SIZE);
    expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(hash.digest('hex'));
  }, 240_000);
});
