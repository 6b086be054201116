import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox check` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'check',
  summary: '(not built yet)',
  help: 'stepbox check — not built yet.\nExample: stepbox check --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox check: not built yet\n');
    return EXIT.usage;
  },
};
