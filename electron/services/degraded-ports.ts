import type { EnginePorts } from './ports.js';
import { ServiceError } from './service-error.js';

/** Ports whose every call fails with `reason`: the window still loads and shows it. */
export function degradedPorts(reason: string): EnginePorts {
  const fail = () => Promise.reject(new ServiceError('internal', reason));
  const failSync = (): never => {
    throw new ServiceError('internal', reason);
  };
  return {
    harness: { start: fail, reopen: fail, fork: fail, replayVerify: fail, whatIf: fail },
    traces: {
      listBranches: fail,
      unreadable: () => [],
      search: fail,
      resolve: failSync,
      branchesOf: failSync,
      read: failSync,
      version: failSync,
      snapshots: failSync,
    },
    docker: {
      status: async () => ({ ok: false, message: reason, fix: 'npm run build' }),
      openTerminal: fail,
      openStats: fail,
    },
    catalog: { tasks: fail, cases: fail, openCase: fail, caseVariant: fail },
    doctor: { run: fail },
  };
}
