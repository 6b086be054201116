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

/** What introduces the list of accepted forms after an agent error's sentence. */
const FORMS_LEAD = ' Every form: ';

/**
 * An agent error as one sentence (what is wrong and the fix) followed by the forms accepted.
 * The CLI prints it whole; the window shows the sentence and folds the forms under "Details"
 * ({@link splitForms}): a dozen lines of syntax hid what was wrong.
 */
export function withForms(sentence: string, forms: string): string {
  return `${sentence}${FORMS_LEAD}${forms}`;
}

/** A message made by {@link withForms}: its sentence, and the forms (null for any other message). */
export function splitForms(message: string): { readonly text: string; readonly forms: string | null } {
  const at = message.indexOf(FORMS_LEAD);
  return at < 0
    ? { text: message, forms: null }
    : { text: message.slice(0, at), forms: message.slice(at + FORMS_LEAD.length) };
}

/** What each placeholder of a form stands for, said in a sentence ("needs a file after …"). */
const PLACEHOLDER_WORDS: Readonly<Record<string, string>> = {
  FILE: 'a file',
  EPISODE: 'an episode id',
  MODEL: 'a model name',
  CMD: 'a command',
};

/**
 * The one sentence of an agent spec with nothing after its kind's colon (`scripted:`): what it
 * lacks and how it is written, e.g. `needs a file after the colon: scripted:FILE`.
 */
export function missingArgument(kind: string, forms: string): string {
  const form = new RegExp(`(?:^|[\\s,])(${kind}:([A-Z]+)\\S*?)(?=[,\\s]|$)`).exec(forms);
  return form
    ? `needs ${PLACEHOLDER_WORDS[form[2]] ?? form[2]} after the colon: ${form[1]}`
    : 'needs something after the colon';
}

/** A version as a recipe pins one (`0.171.0`, `1.0.0-beta.2`): printable and short. */
const VERSION = /^[0-9][0-9A-Za-z.+-]{0,63}$/;

/**
 * The version of the recipe an agent ran (`codex` → `0.171.0`), read from its trace header's
 * `recipe` (`codex@0.171.0`, written by the engine when the recipe started it), or null: not a
 * recipe, or a `recipe` that is not its spec's name at a version (a header is untrusted input).
 * Every view of an episode asks this one function (the window, `show`, `share`).
 */
export function agentVersionOf(agent: { readonly spec: string; readonly recipe?: unknown }): string | null {
  if (typeof agent.recipe !== 'string') return null;
  const at = agent.recipe.lastIndexOf('@');
  const version = agent.recipe.slice(at + 1);
  return at > 0 && agent.recipe.slice(0, at) === agent.spec && VERSION.test(version) ? version : null;
}

/** An agent as a person reads it: its spec, then the recipe's version (`codex 0.171.0`). */
export function agentWords(spec: string, version: string | null | undefined): string {
  return version ? `${spec} ${version}` : spec;
}
