import { useMemo } from 'react';
import {
  commonPlaces,
  pathRoots,
  peopleText,
  type FilePlace,
  type PathRoot,
} from '../../../shared/start-paths';
import { useSlice } from '../stores/use-stores';

/**
 * The folders the window says host paths from (`$STEPBOX_HOME`, `resources`, an opened
 * project by its name), and the places a start may read from (the server's list): both from
 * the settings and the Projects list the window holds. Places are empty until the settings
 * are known (null), so nothing is called outside before the window knows where "inside" is.
 */
export function usePathPlaces(): { readonly roots: PathRoot[]; readonly common: FilePlace[] | null } {
  const storeHome = useSlice('running', (s) => s.storeHome);
  const bundled = useSlice('running', (s) => s.bundledDir);
  const projects = useSlice('projects', (s) => s.projects);
  return useMemo(() => {
    const paths = projects.map((p) => p.path);
    return {
      roots: pathRoots(storeHome, bundled, paths),
      common: storeHome === null ? null : commonPlaces(storeHome, bundled, paths),
    };
  }, [storeHome, bundled, projects]);
}

/**
 * A message (an error, a notice) with its host paths said from the window's folders
 * (shared/start-paths.ts `peopleText`): a screenshot or a shared screen carries no host
 * layout. The message as the server wrote it, full paths and all, is the tooltip.
 */
export function PeopleText(props: {
  readonly text: string;
  readonly className?: string;
  readonly testId?: string;
  /** Roots said first (a task's card: its folder by its own name). */
  readonly roots?: readonly PathRoot[];
  /** The tooltip, when it says more than the message (default: the message as the server wrote it). */
  readonly title?: string;
}) {
  const { roots } = usePathPlaces();
  const said = peopleText(props.text, props.roots ?? roots);
  return (
    <span className={props.className} data-testid={props.testId} title={props.title ?? props.text}>
      {said}
    </span>
  );
}
