import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox list` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'list',
  summary: '(not built yet)',
  help: 'stepbox list — not built yet.\nExample: stepbox list --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox list: not built yet\n');
    return EXIT.usage;
  },
};
