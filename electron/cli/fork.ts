import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox fork` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'fork',
  summary: '(not built yet)',
  help: 'stepbox fork — not built yet.\nExample: stepbox fork --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox fork: not built yet\n');
    return EXIT.usage;
  },
};
