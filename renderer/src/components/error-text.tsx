import { splitForms } from '../../../shared/agent-kind';
import type { PathRoot } from '../../../shared/start-paths';
import { PeopleText } from './people-text';

/**
 * An error as a person reads it: its one sentence (what is wrong and the fix), with host paths
 * said from the window's folders; the forms an agent field accepts, when the error lists them,
 * folded under "Details" (shared/agent-kind.ts `withForms`): a twelve-line block of syntax
 * stood where the sentence should have been read.
 */
export function ErrorText(props: { readonly text: string; readonly roots?: readonly PathRoot[] }) {
  const { text, forms } = splitForms(props.text);
  return (
    <>
      <PeopleText text={text} roots={props.roots} testId="error-sentence" />
      {forms ? (
        <details className="error-forms" data-testid="error-forms">
          <summary>Details: every form it accepts</summary>
          {forms}
        </details>
      ) : null}
    </>
  );
}
