import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox report` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'report',
  summary: '(not built yet)',
  help: 'stepbox report — not built yet.\nExample: stepbox report --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox report: not built yet\n');
    return EXIT.usage;
  },
};
