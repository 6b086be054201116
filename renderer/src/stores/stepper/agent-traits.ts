import type { AgentTraits } from '../../../../shared/contract/models';
import type { StepperState } from './stepper-store';

/**
 * True when a person decides the open branch's steps (its agent says so in `agent_traits`: a
 * manual agent): the Decision section, and Escape pausing a step that waits for the person.
 * Asked of the agent, never of a kind's name (issue 34.4).
 */
export function selectPersonDecides(s: Pick<StepperState, 'view'>): boolean {
  return s.view?.summary.agent_traits?.decides === 'person';
}

/**
 * Why a branch of this agent cannot be saved as a case, with the way forward (null when it
 * can, or when the server did not say: the engine's `case new` then answers).
 */
export function caseRefusal(traits: AgentTraits | null | undefined): string | null {
  if (!traits || traits.as_case !== null) return null;
  switch (traits.decides) {
    case 'program':
      return 'A case replays its agent from a script, and this agent ran its own program inside the sandbox (Codex, Claude Code, sandbox:): it cannot be saved as a case. Share… keeps it as one HTML file; a Fork (under Replay) with a scripted: agent makes a branch that can be saved.';
    case 'unknown':
      return 'An imported trace has no task to run again: it cannot be saved as a case. Share… keeps it as one HTML file.';
    default:
      return "A case replays its agent from a script, and this agent's decisions are not saved as one: it cannot be saved as a case. Share… keeps it as one HTML file; a Fork (under Replay) with a scripted: agent makes a branch that can be saved.";
  }
}
