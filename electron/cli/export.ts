import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox export` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'export',
  summary: '(not built yet)',
  help: 'stepbox export — not built yet.\nExample: stepbox export --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox export: not built yet\n');
    return EXIT.usage;
  },
};
