import type { Task } from '../../../shared/task.js';

/**
 * One line of the progress of a task's image being made: built from its Dockerfile
 * (docker/build-image.ts `BuildProgress`) or pulled because the engine lacks it
 * (docker/pull-image.ts `PullProgress`).
 */
export interface ImageProgress {
  readonly image: string;
  readonly kind: 'build' | 'pull';
  readonly phase: 'cached' | 'start' | 'step' | 'built' | 'pulled';
  readonly line: string;
  /** A build's Dockerfile (absent for a pull). */
  readonly from?: string;
}

/**
 * Where a new episode's image comes from: when the task names a Dockerfile
 * (`sandbox.build`), the engine builds it (or finds it built) and gives the task back with
 * `sandbox.image` set to it; an image the engine lacks is pulled, with progress. The
 * harness knows only this; the Docker side is docker/build-image.ts and
 * docker/pull-image.ts, composed in open-engine.ts.
 */
export interface TaskImages {
  /** The task with its build made into `sandbox.image`, that image in the engine (pulled if need be). */
  resolve(task: Task, taskPath: string | null, progress: (p: ImageProgress) => void): Promise<Task>;
}

/**
 * A task whose build was made into its image (`sandbox.image` the built tag): the build
 * itself left out, so what runs it next (a fork, a case, a batch's slots, a replay) uses the
 * image and never builds. The trace header records this task.
 */
export function withoutBuild(task: Task): Task {
  const { build: _built, ...sandbox } = task.sandbox;
  void _built;
  return { ...task, sandbox };
}
