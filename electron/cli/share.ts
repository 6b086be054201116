import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseRedactions } from '../engine/export/redact.js';
import { shareData } from '../engine/share/share-data.js';
import { shareHtml } from '../engine/share/share-html.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { cliEngine, cliError } from './episode-cli.js';
import { parseOrUsage } from './parse-or-usage.js';
import { printJson, resolveArg } from './store-common.js';
import { countOf } from '../../shared/count-of.js';

const HELP = `stepbox share EPISODE --out FILE.html [--redact FIELD|/regex/ ...] [--json]

Writes one self-contained HTML file with the window's read-only views of an episode or
branch: the timeline, the inspector's tabs (action, output, request, memory, files diff,
QA) for every step, the QA flags, the episode's branch tree and, for a case, its
walkthrough. It opens from disk in any browser, offline: no server, nothing fetched (its
Content-Security-Policy forbids it). Secrets are redacted by the same --redact options as
stepbox export. A long text (a 10 MB tool output, an argument) is kept as its head and tail,
as the window shows it, and the step says how much is left out and that
\`stepbox show EPISODE --json\` prints it whole. Model requests and file texts beyond a
budget are left out, and the file says so. The file's size is printed.

Options:
  --out FILE       the HTML file to write (required)
  --redact X       a field name (its values become [REDACTED]), /regex/flags, or @secrets
                   (API keys, tokens, password=… values); repeatable
  --json           print {out, bytes, steps (counted from 1 as show counts them; step 0
                   is the setup), flags, branches, omitted}

Example:
  stepbox share ep-20260101-120000-ab12 --out episode.html --redact @secrets
`;

/** \`stepbox share\` — an episode as one HTML file a colleague opens without stepbox. */
export const command: CliCommand = {
  name: 'share',
  summary: 'write an episode as one self-contained HTML file that opens offline',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseOrUsage(() =>
      parseArgs({
        args: argv,
        allowPositionals: true,
        options: {
          out: { type: 'string' },
          redact: { type: 'string', multiple: true, default: [] },
          json: { type: 'boolean', default: false },
        },
      }),
    );
    if (positionals.length !== 1) throw new UsageError('expected one EPISODE (stepbox list shows them)');
    if (!values.out) throw new UsageError('--out FILE.html is required');
    let redaction;
    try {
      redaction = parseRedactions(values.redact ?? []);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const engine = cliEngine(io);
    try {
      const branch = resolveArg(engine.store, positionals[0]);
      const data = await shareData(engine.store, branch.branch, redaction).catch((e: unknown) => {
        throw cliError(e);
      });
      const html = shareHtml(data);
      writeFileSync(values.out, html);
      const bytes = Buffer.byteLength(html);
      const summary = {
        out: values.out,
        bytes,
        // Counted as show and the window count (from 1): `data.steps` also holds step 0, the setup.
        steps: data.step_count,
        flags: data.flags.length,
        branches: data.branches.length,
        omitted: data.omitted,
      };
      if (values.json) printJson(io, summary);
      else {
        io.stdout.write(
          `${values.out}: ${(bytes / 1024).toFixed(1)} KiB (${bytes} bytes), ${countOf(data.step_count, 'step')}, ${countOf(data.flags.length, 'QA flag')}\n`,
        );
        for (const o of data.omitted) io.stdout.write(`  left out: ${o}\n`);
      }
      return EXIT.ok;
    } finally {
      await engine.close();
    }
  },
};
