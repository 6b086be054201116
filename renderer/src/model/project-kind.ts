import type { Project } from '../../../shared/contract/models';

/**
 * What a project card says it is, before its path: how its world is written, so a Harbor task
 * or a devcontainer reads as one (a Harbor task was "task · hello-file").
 */
export function projectKindWords(project: Pick<Project, 'kind' | 'world'>): string {
  switch (project.world) {
    case 'harbor':
      // A folder of Harbor task folders (a dataset) takes a Goal as any folder.
      return project.kind === 'folder' ? 'folder of Harbor tasks' : 'Harbor task';
    case 'devcontainer':
      return 'devcontainer';
    case 'task':
      return 'task.json';
    default:
      return project.kind === 'folder' ? 'folder' : 'task';
  }
}
