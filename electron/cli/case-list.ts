import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox case list` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'case list',
  summary: '(not built yet)',
  help: 'stepbox case list — not built yet.\nExample: stepbox case list --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox case list: not built yet\n');
    return EXIT.usage;
  },
};
