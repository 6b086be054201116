/** The call whose result an override replaces: its step and tool, when the panel knows them. */
export interface OverrideTarget {
  readonly step: number;
  readonly tool: string;
}

/**
 * What the Inject panel's override section says of the result it replaces, in a person's words:
 * the step that already ran and its tool. It said "Load pending result" and "pending tool result
 * overridden" of a step whose tool had run, which read as if something were still to run.
 */
export function overrideWords(target: OverrideTarget | null): {
  /** The button that copies the tool's result into the field, to edit it. */
  readonly copy: string;
  readonly copyTitle: string;
  /** The answer once the override is taken. */
  readonly done: string;
} {
  const whose = target ? `step ${target.step}'s` : 'the';
  return {
    copy: `Copy ${whose} result to edit`,
    copyTitle: target
      ? `put what ${target.tool} returned at step ${target.step} in the field, to change it before the agent reads it`
      : 'put the result the agent is about to read in the field, to change it',
    done: target
      ? `The agent reads yours as step ${target.step}'s result next.`
      : "The agent reads yours as the tool's result next.",
  };
}
