// The window's only bridge to the main process: the contract as `window.stepbox`, with
// one narrow method per operation (`stepbox.episode.step({id})`) and one `onX()` per
// event stream returning an unsubscribe — nothing else (no ipcRenderer, no Node).
// A sandboxed preload must be CommonJS and may only require 'electron', so the names are
// listed here and checked against the contract at compile time.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a sandboxed preload is CommonJS
import electron = require('electron');
import type { EventName, OperationName, StepboxClient } from '../shared/contract/index.js';

const { contextBridge, ipcRenderer } = electron;

const OPERATIONS = [
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

const EVENTS = [
  'episode.event',
  'episode.agentOutput',
  'episode.state',
  'episode.activity',
  'episode.released',
  'terminal.data',
  'terminal.exit',
  'sandbox.stats',
  'sandbox.statsEnd',
  'library.changed',
  'app.command',
  'batch.progress',
  'image.progress',
  'agents.progress',
] as const satisfies readonly EventName[];

// Compile-time: every operation and event of the contract is listed above.
type Missing<All, Listed> = Exclude<All, Listed>;
const everyOperation: [Missing<OperationName, (typeof OPERATIONS)[number]>] extends [never] ? true : never =
  true;
const everyEvent: [Missing<EventName, (typeof EVENTS)[number]>] extends [never] ? true : never = true;
void everyOperation;
void everyEvent;

function methodName(event: string): string {
  const [domain, verb] = event.split('.');
  return `on${domain[0].toUpperCase()}${domain.slice(1)}${verb[0].toUpperCase()}${verb.slice(1)}`;
}

const api: Record<string, unknown> = {};
for (const op of OPERATIONS) {
  const [domain, verb] = op.split('.');
  const group = (api[domain] ??= {}) as Record<string, unknown>;
  group[verb] = (request: unknown = {}) =>
    ipcRenderer.invoke(`stepbox:${op}`, request).catch((e: unknown) => ({
      ok: false,
      error: { code: 'internal', message: `${op}: ${e instanceof Error ? e.message : String(e)}` },
    }));
}
for (const event of EVENTS) {
  api[methodName(event)] = (listener: (payload: unknown) => void) => {
    const forward = (_e: unknown, payload: unknown) => listener(payload);
    ipcRenderer.on(`stepbox:event:${event}`, forward);
    return () => {
      ipcRenderer.removeListener(`stepbox:event:${event}`, forward);
    };
  };
}

contextBridge.exposeInMainWorld('stepbox', api as StepboxClient);
