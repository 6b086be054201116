import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox gc` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'gc',
  summary: '(not built yet)',
  help: 'stepbox gc — not built yet.\nExample: stepbox gc --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox gc: not built yet\n');
    return EXIT.usage;
  },
};
