import type { Task } from '../../../shared/task.js';

/** One line of an image build's progress (docker/build-image.ts `BuildProgress`). */
export interface ImageProgress {
  readonly image: string;
  readonly phase: 'cached' | 'start' | 'step' | 'built';
  readonly line: string;
}

/**
 * Where a task's image comes from when it names a Dockerfile (`sandbox.build`): the engine
 * builds it (or finds it built) and gives the task back with `sandbox.image` set to it. The
 * harness knows only this; the Docker side is docker/build-image.ts, composed in
 * open-engine.ts.
 */
export interface TaskImages {
  /** The task with its build made into `sandbox.image`; a task without `sandbox.build` as it is. */
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
