import { useSyncExternalStore } from 'react';

// One timer for every clock on screen (the Running list's ages and idle times): it ticks only
// while something shows a time, and only those components render on a tick, not the window.
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;
let now = Date.now();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === undefined) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of listeners) l();
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** The time (epoch ms), new each second while the calling component is mounted. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}
