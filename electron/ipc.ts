import { BrowserWindow, ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { OPERATION_NAMES, type EventName } from '../shared/contract/index.js';
import { appError } from '../shared/errors.js';
import { err, type Result } from '../shared/result.js';
import { logger } from './engine/log.js';
import type { AppServices } from './services/app-services.js';

const log = logger('ipc');

/** The IPC channel of an operation (`stepbox:episode.step`). */
export const callChannel = (op: string) => `stepbox:${op}`;
/** The IPC channel of an event stream (`stepbox:event:episode.event`). */
export const eventChannel = (event: EventName) => `stepbox:event:${event}`;

/** The connection id of a window's contents: it owns the terminals and stats streams it opens. */
const clientOf = (contents: WebContents) => `window-${contents.id}`;

/**
 * Binds every contract operation to the services in ONE wrapper: the sender frame must be
 * the app's own page (`isAppUrl`), and the services validate every input against its zod
 * schema; both failures come back as data. Events go to the app's windows (a stream's
 * events only to the window that opened it). Returns the unbinding.
 */
export function bindContract(services: AppServices, isAppUrl: (url: string) => boolean): () => void {
  const closedWatch = new Set<number>();
  const handler =
    (op: string) =>
    async (event: IpcMainInvokeEvent, input: unknown): Promise<Result<unknown>> => {
      const url = event.senderFrame?.url ?? '';
      if (!isAppUrl(url) || event.senderFrame !== event.sender.mainFrame) {
        log.warn(`refused ${op} from ${url || 'an unknown frame'}`);
        return err(appError('unauthorized', `${op}: only the stepbox window may call the contract`));
      }
      const contents = event.sender;
      if (!closedWatch.has(contents.id)) {
        closedWatch.add(contents.id);
        const id = contents.id;
        // A window: once none is left (after a grace), the live sandboxes are released.
        services.openClient(clientOf(contents));
        contents.once('destroyed', () => {
          closedWatch.delete(id);
          void services.closeClient(`window-${id}`);
        });
      }
      return services.handle(op, input, { client: clientOf(contents) });
    };
  for (const op of OPERATION_NAMES) ipcMain.handle(callChannel(op), handler(op));

  const off = services.subscribeAudience((event, payload, audience) => {
    for (const win of BrowserWindow.getAllWindows()) {
      const contents = win.webContents;
      if (contents.isDestroyed() || !isAppUrl(contents.getURL())) continue;
      if (audience === null || audience === clientOf(contents)) contents.send(eventChannel(event), payload);
    }
  });
  return () => {
    off();
    for (const op of OPERATION_NAMES) ipcMain.removeHandler(callChannel(op));
  };
}
