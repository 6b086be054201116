import { selectDockerDown } from '../stores/sandbox/sandbox-store';
import { useSlice } from '../stores/use-stores';

/**
 * With Docker down, one brief line where a person is about to start a case or a sample task:
 * running needs Docker, what is wrong and the fix; reading does not. Only the Sandbox pane said
 * so, and the welcome and the case list offered Run as if it would start (docker-down).
 */
export function DockerNeeded() {
  const down = useSlice('sandbox', selectDockerDown);
  const docker = useSlice('sandbox', (s) => s.docker);
  if (!down || !docker) return null;
  return (
    <p className="why-line docker-needed" role="status" data-testid="docker-needed">
      {docker.headline ?? 'Docker cannot be used'}: running a case or a task needs it (recorded episodes and
      cases still open).
      {docker.fix ? (
        <>
          {' '}
          Fix: <code>{docker.fix}</code>
        </>
      ) : null}
    </p>
  );
}
