import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox batch` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'batch',
  summary: '(not built yet)',
  help: 'stepbox batch — not built yet.\nExample: stepbox batch --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox batch: not built yet\n');
    return EXIT.usage;
  },
};
