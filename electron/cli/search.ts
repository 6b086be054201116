import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox search` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'search',
  summary: '(not built yet)',
  help: 'stepbox search — not built yet.\nExample: stepbox search --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox search: not built yet\n');
    return EXIT.usage;
  },
};
