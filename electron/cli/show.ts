import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox show` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'show',
  summary: '(not built yet)',
  help: 'stepbox show — not built yet.\nExample: stepbox show --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox show: not built yet\n');
    return EXIT.usage;
  },
};
