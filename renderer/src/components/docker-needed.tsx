import { useState } from 'react';
import { selectDockerDown } from '../stores/sandbox/sandbox-store';
import { useSlice } from '../stores/use-stores';

/** The doctor's fix for Docker, whole, in a line of its own (nothing when it has none): the Sandbox pane's and Details'. */
export function DockerFix(props: { readonly fix: string | null | undefined }) {
  return props.fix ? (
    <p>
      Fix: <code>{props.fix}</code>
    </p>
  ) : null;
}

/**
 * With Docker down, one brief line where a person is about to start a case or a sample task:
 * running needs Docker, what is wrong and the fix; reading does not. Only the Sandbox pane said
 * so, and the welcome and the case list offered Run as if it would start (docker-down).
 *
 * At most two lines: what is wrong, and the fix (cut, whole behind Details with what running
 * needs). Whole, the doctor's fix ("start the engine at DOCKER_HOST=…, or unset …") took six lines
 * of the library at 1024×700. Where the pane is wide enough, both share one line.
 */
export function DockerNeeded() {
  const down = useSlice('sandbox', selectDockerDown);
  const docker = useSlice('sandbox', (s) => s.docker);
  const [open, setOpen] = useState(false);
  if (!down || !docker) return null;
  const headline = docker.headline ?? 'Docker cannot be used';
  return (
    <div className="why-line docker-needed" role="status" data-testid="docker-needed">
      <p className="docker-needed-lines">
        <span className="docker-needed-what" data-testid="docker-needed-what">
          {headline}.
        </span>
        <span className="docker-needed-tail">
          {/* Open, the fix is said whole below: not twice. */}
          {docker.fix && !open ? (
            <span className="docker-needed-fix" data-testid="docker-needed-fix" title={docker.fix}>
              Fix: <code>{docker.fix}</code>
            </span>
          ) : null}
          <button
            type="button"
            className="disclosure docker-needed-more"
            data-testid="docker-needed-more"
            aria-expanded={open}
            aria-controls="docker-needed-details"
            onClick={() => setOpen(!open)}
          >
            {open ? '▾' : '▸'} Details
          </button>
        </span>
      </p>
      {open ? (
        <div id="docker-needed-details" data-testid="docker-needed-details">
          <p>
            Running a case or a sample task needs Docker; recorded episodes and cases still open without it.
          </p>
          <DockerFix fix={docker.fix} />
        </div>
      ) : null}
    </div>
  );
}
