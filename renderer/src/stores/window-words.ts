import { CHECK_FIELD, GOAL_FIELD, MODEL_FIELD } from '../../../shared/start-paths';
import { OPENAI_SPEC } from '../../../shared/agent-kind';

/**
 * An engine message in the window's words. The engine is shared with the CLI and names its
 * flags (`--agent`, `--model SOURCE`, "agent spec", `--at K`); the window has fields for
 * them instead, named alike in the start form, the batch form and the Replay panel
 * ("Agent", "Its model calls answered by", "Agent folder", a project's "Goal" and "Check"), and a step where the CLI has
 * `--at`. Every engine error the window shows is worded here, in one place.
 */
export function inWindowWords(message: string): string {
  return (
    message
      // The window has no base-URL field: the endpoint goes in the agent (openai:MODEL@URL).
      .replace(/ or --base-url URL\b/g, '')
      .replace(/--base-url\b/g, `the endpoint in “Agent” (${OPENAI_SPEC})`)
      .replace(/--model SOURCE|--model\b/g, `“${MODEL_FIELD}”`)
      .replace(/--agent-dir DIR|--agent-dir\b/g, '“Agent folder”')
      .replace(/--agent exec:CMD/g, '“Agent” exec:COMMAND')
      .replace(/\bagent spec\b/g, '“Agent”')
      .replace(/--agent\b/g, '“Agent”')
      .replace(/--at (-?\d+)/g, 'step $1')
      // A bare project folder's card has Goal and Check fields for them.
      .replace(/--goal( TEXT| "[^"]*")?/g, `“${GOAL_FIELD}”`)
      .replace(/--verify( CMD)?\b/g, `“${CHECK_FIELD}”`)
      .replace(
        /give --n N, --from FILE, or type one/g,
        'give “candidates from the agent” a number, or type one',
      )
  );
}
