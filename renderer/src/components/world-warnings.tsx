/**
 * What of a world stepbox leaves out or does otherwise than it says (its reader's warnings: a
 * devcontainer's `forwardPorts`, a bare folder's Dockerfile): on a project's card before it
 * starts, and with step 0's task facts once it ran (from the trace header). Each line whole,
 * wrapped, never cut: a warning read half is not read. Untrusted text, put in as text.
 */
export function WorldWarnings({
  warnings,
  testId,
}: {
  readonly warnings: readonly string[] | undefined;
  readonly testId: string;
}) {
  if (!warnings?.length) return null;
  return (
    <ul className="world-warnings" data-testid={testId} aria-label="what stepbox leaves out of it">
      {warnings.map((w, i) => (
        <li key={i} data-testid="world-warning">
          {w}
        </li>
      ))}
    </ul>
  );
}
