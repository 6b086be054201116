import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox sandbox shell` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'sandbox shell',
  summary: '(not built yet)',
  help: 'stepbox sandbox shell — not built yet.\nExample: stepbox sandbox shell --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox sandbox shell: not built yet\n');
    return EXIT.usage;
  },
};
