import { useCallback, useEffect, useRef, useState } from 'react';
import { DEFAULT_PANES, fitPanes, loadPanes, savePanes, type PaneSizes } from './pane-sizes';

function windowSize(): { width: number; height: number } {
  return { width: window.innerWidth, height: window.innerHeight };
}

/**
 * The pane sizes to draw now (fitted to the window) and a setter per pane; a drag's end
 * remembers the sizes. The requested sizes are kept apart from the fitted ones, so
 * shrinking the window and growing it back restores what the person chose.
 */
export function usePanes(): {
  readonly sizes: PaneSizes;
  readonly set: (key: keyof PaneSizes, px: number) => void;
  readonly commit: () => void;
  /** The person sized this pane (dragged, or moved by keys, now or in an earlier session). */
  readonly chosen: (key: keyof PaneSizes) => boolean;
} {
  const [wanted, setWanted] = useState<PaneSizes>(() => loadPanes());
  const [win, setWin] = useState(windowSize);
  const latest = useRef(wanted);
  latest.current = wanted;
  useEffect(() => {
    const onResize = () => setWin(windowSize());
    window.addEventListener('resize', onResize);
    return () => window.removeEventListener('resize', onResize);
  }, []);
  const sizes = fitPanes(wanted, win.width, win.height);
  const set = useCallback((key: keyof PaneSizes, px: number) => {
    // Keep the dragged pane within its limits (no hidden reserve to drag back through); leave the others as chosen.
    setWanted((w) => ({
      ...w,
      [key]: fitPanes({ ...w, [key]: px }, window.innerWidth, window.innerHeight)[key],
    }));
  }, []);
  const commit = useCallback(() => savePanes(latest.current), []);
  // fitPanes' rule too: a size other than the default is one the person chose.
  const chosen = (key: keyof PaneSizes) => wanted[key] !== DEFAULT_PANES[key];
  return { sizes, set, commit, chosen };
}
