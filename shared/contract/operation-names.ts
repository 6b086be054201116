import type { OperationName } from './operations.js';

// A plain list apart from the schemas: the window's client needs the names before its first
// render, and building every operation's zod schema for them cost it ~280 ms (issue 19.10).

/** Steps one `episode.stepDetails` may ask for: the viewed step's neighbours on both sides. */
export const MAX_STEP_DETAILS = 64;

/** Every operation name, in declaration order (checked against the contract at compile time). */
export const OPERATION_NAMES = [
  'library.list',
  'library.search',
  'tasks.list',
  'cases.list',
  'cases.open',
  'cases.save',
  'files.list',
  'files.choose',
  'files.chosen',
  'files.forget',
  'projects.list',
  'projects.open',
  'projects.remove',
  'projects.browse',
  'projects.pick',
  'episode.open',
  'episode.rows',
  'episode.flags',
  'episode.start',
  'episode.checkStart',
  'episode.step',
  'episode.run',
  'episode.pause',
  'episode.stop',
  'episode.decide',
  'episode.setBreakpoints',
  'episode.inject',
  'episode.override',
  'episode.setStopPoints',
  'episode.editAnswer',
  'episode.editArguments',
  'episode.replaceResult',
  'episode.share',
  'episode.rollback',
  'episode.fork',
  'episode.reopen',
  'episode.replayVerify',
  'episode.whatIf',
  'episode.compare',
  'episode.candidates',
  'episode.stageCandidates',
  'episode.pickCandidate',
  'episode.discardCandidates',
  'episode.trace',
  'episode.stepDetail',
  'episode.stepDetails',
  'sandbox.info',
  'system.doctor',
  'settings.get',
  'terminal.open',
  'terminal.input',
  'terminal.resize',
  'terminal.ack',
  'terminal.close',
  'stats.subscribe',
  'stats.unsubscribe',
  'batch.start',
  'batch.list',
  'batch.get',
  'batch.cancel',
  'batch.resume',
  'agents.list',
  'agents.install',
  'agents.cancelInstall',
  'agents.remove',
] as const satisfies readonly OperationName[];

// Compile-time: the list names every operation of the contract, and only those.
const everyOperation: [Exclude<OperationName, (typeof OPERATION_NAMES)[number]>] extends [never]
  ? true
  : never = true;
void everyOperation;
