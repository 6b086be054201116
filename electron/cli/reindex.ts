import type { CliCommand } from './command.js';
import { EXIT } from './command.js';

/** `stepbox reindex` — placeholder until its owner lands it. */
export const command: CliCommand = {
  name: 'reindex',
  summary: '(not built yet)',
  help: 'stepbox reindex — not built yet.\nExample: stepbox reindex --help\n',
  async run(_argv, io) {
    io.stderr.write('stepbox reindex: not built yet\n');
    return EXIT.usage;
  },
};
