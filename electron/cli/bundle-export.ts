import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox bundle export` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'bundle export',
  summary: '(not built yet)',
  help: 'stepbox bundle export — not built yet.\nExample: stepbox bundle export --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox bundle export: not built yet\n');
    return EXIT.usage;
  },
};
