/** The signals stepbox treats as "stop": Ctrl+C and a polite kill. */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * The one interrupt handler of a stepbox process (CLI commands, `serve`): calls `handler`
 * once, on the first Ctrl+C or SIGTERM, and swallows later ones while installed, so a
 * second Ctrl+C cannot cut short the cleanup that closes traces as `interrupted` and
 * destroys sandboxes. Returns the uninstall function.
 */
export function onInterrupt(handler: (signal: NodeJS.Signals) => void): () => void {
  let fired = false;
  const listener = (signal: NodeJS.Signals) => {
    if (fired) return;
    fired = true;
    handler(signal);
  };
  for (const s of SIGNALS) process.on(s, listener);
  return () => {
    for (const s of SIGNALS) process.off(s, listener);
  };
}
