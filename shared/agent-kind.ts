/**
 * True for an agent spec whose agent is a program of its own answered through the
 * model endpoint (`--model`): `exec:CMD`, `sandbox:CMD`, or a recipe's name (`codex`,
 * `claude-code`). The window's start form asks for a model source for these.
 */
export function runsOwnProgramSpec(spec: string): boolean {
  const s = spec.trim();
  return (
    s.startsWith('exec:') ||
    s.startsWith('sandbox:') ||
    (/^[a-z][a-z0-9-]*$/.test(s) && s !== 'manual' && s !== 'oracle')
  );
}

/**
 * True for an agent kind (a branch's `agent_kind`, from its trace header) whose agent is a
 * program of its own: `exec` and `sandbox` (a recipe runs as `sandbox`). The window asks the
 * kind the engine recorded, not the spec's text.
 */
export function runsOwnProgramKind(kind: string): boolean {
  return kind === 'exec' || kind === 'sandbox';
}

/** True for a `sandbox:CMD` spec: the one agent kind whose files a person names (`--agent-dir`). */
export function runsInSandboxSpec(spec: string): boolean {
  return spec.trim().startsWith('sandbox:');
}

/**
 * How an endpoint agent is written, the one spelling of every help text and error, the window's
 * and the engine's: `openai:MODEL@URL`, the `@URL` optional. They said it three ways
 * (`openai:MODEL@URL`, `openai:MODEL[@BASE_URL]`, `@BASE_URL`).
 */
export function endpointSpec(kind: 'openai' | 'anthropic' | 'gemini'): string {
  return `${kind}:MODEL@URL`;
}

/** The OpenAI-compatible endpoint's spelling ({@link endpointSpec}): what the window's hints name first. */
export const OPENAI_SPEC = endpointSpec('openai');
