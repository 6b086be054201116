import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox doctor` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'doctor',
  summary: '(not built yet)',
  help: 'stepbox doctor — not built yet.\nExample: stepbox doctor --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox doctor: not built yet\n');
    return EXIT.usage;
  },
};
