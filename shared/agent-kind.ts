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
