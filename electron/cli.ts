import type { CliCommand, CliIo } from './cli/command.js';
import { EXIT } from './cli/command.js';
import { errorReport } from './cli/error-report.js';
import { terminalSafeIo } from './cli/terminal-io.js';

/**
 * Every command, loaded lazily so `stepbox --help` and light commands start fast.
 * A command name with a space (`image build`) is matched against the first two words.
 */
const COMMANDS: Record<string, () => Promise<{ command: CliCommand }>> = {
  doctor: () => import('./cli/doctor.js'),
  'image build': () => import('./cli/image-build.js'),
  'sandbox exec': () => import('./cli/sandbox-exec.js'),
  'sandbox shell': () => import('./cli/sandbox-shell.js'),
  'sandbox selftest': () => import('./cli/sandbox-selftest.js'),
  bench: () => import('./cli/bench.js'),
  run: () => import('./cli/run.js'),
  list: () => import('./cli/list.js'),
  show: () => import('./cli/show.js'),
  open: () => import('./cli/open.js'),
  fork: () => import('./cli/fork.js'),
  resume: () => import('./cli/resume.js'),
  replay: () => import('./cli/replay.js'),
  search: () => import('./cli/search.js'),
  'bundle export': () => import('./cli/bundle-export.js'),
  'bundle import': () => import('./cli/bundle-import.js'),
  'import-atif': () => import('./cli/import-atif.js'),
  gc: () => import('./cli/gc.js'),
  reindex: () => import('./cli/reindex.js'),
  'long-trace': () => import('./cli/long-trace.js'),
  serve: () => import('./cli/serve.js'),
  check: () => import('./cli/check.js'),
  'case list': () => import('./cli/case-list.js'),
  'case run': () => import('./cli/case-run.js'),
  'case verify': () => import('./cli/case-verify.js'),
  'case new': () => import('./cli/case-new.js'),
  'case export': () => import('./cli/case-export.js'),
  'case import': () => import('./cli/case-import.js'),
  batch: () => import('./cli/batch.js'),
  report: () => import('./cli/report.js'),
  share: () => import('./cli/share.js'),
  export: () => import('./cli/export.js'),
  ab: () => import('./cli/ab.js'),
  mcp: () => import('./cli/mcp.js'),
  diff: () => import('./cli/diff.js'),
  candidates: () => import('./cli/candidates.js'),
  'agents add': () => import('./cli/agents-add.js'),
  'agents list': () => import('./cli/agents-list.js'),
  'agents remove': () => import('./cli/agents-remove.js'),
};

const GROUPS = new Set(['image', 'sandbox', 'bundle', 'case', 'agents']);

async function usage(io: CliIo): Promise<void> {
  const lines = [
    'stepbox — develop AI agents against real sandboxes',
    '',
    'Usage: stepbox <command> [options]   (stepbox <command> --help for details)',
    '',
  ];
  for (const [name, load] of Object.entries(COMMANDS)) {
    const summary = await load()
      .then((m) => m.command.summary)
      .catch(() => '(unavailable in this build)');
    lines.push(`  ${name.padEnd(16)} ${summary}`);
  }
  lines.push(
    '',
    'Example: stepbox doctor && stepbox run resources/tasks/hello-python/task.json --agent scripted:resources/tasks/hello-python/agent.jsonl',
  );
  io.stdout.write(lines.join('\n') + '\n');
}

/** Runs the CLI and returns the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    await usage(io);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (argv[0] === '--version') {
    io.stdout.write('stepbox 0.1.0\n');
    return EXIT.ok;
  }
  const two = `${argv[0]} ${argv[1] ?? ''}`;
  const name = COMMANDS[two] ? two : COMMANDS[argv[0]] ? argv[0] : undefined;
  if (!name) {
    if (GROUPS.has(argv[0])) {
      const subs = Object.keys(COMMANDS).filter((c) => c.startsWith(argv[0] + ' '));
      io.stderr.write(`stepbox ${argv[0]}: expected one of: ${subs.join(', ')}\n`);
    } else {
      io.stderr.write(`stepbox: unknown command "${argv[0]}"; run \`stepbox --help\` for the list\n`);
    }
    return EXIT.usage;
  }
  const rest = argv.slice(name.split(' ').length);
  const { command } = await COMMANDS[name]();
  if (!command.rawTerminal) io = terminalSafeIo(io, rest.includes('--json'));
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.help.trimEnd() + '\n');
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    const report = errorReport(e);
    const hint = report.exit === EXIT.usage ? `Run \`stepbox ${name} --help\` for usage.\n` : '';
    io.stderr.write(`stepbox ${name}: ${report.message}\n${report.fix ? `Fix: ${report.fix}\n` : ''}${hint}`);
    if (report.stack && io.env.STEPBOX_LOG === 'debug') io.stderr.write(`${report.stack}\n`);
    return report.exit;
  }
}
