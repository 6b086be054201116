import { useState } from 'react';

/**
 * An episode or branch id shown whole (ids share their date prefix, so a cut one looks
 * like every other), with the id on hover and a button that copies it.
 */
export function IdText(props: { readonly id: string; readonly copy?: boolean; readonly testId?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    const done = () => {
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    };
    // The clipboard API needs a secure context (app:// and 127.0.0.1 are); fall back to a selection copy.
    if (navigator.clipboard)
      void navigator.clipboard.writeText(props.id).then(done, () => fallbackCopy(props.id) && done());
    else if (fallbackCopy(props.id)) done();
  };
  return (
    <span className="id-text">
      <span className="mono" title={props.id} data-testid={props.testId} data-id={props.id}>
        {props.id}
      </span>
      {props.copy ? (
        <button
          type="button"
          className="copy"
          aria-label={`copy ${props.id}`}
          title="copy the id"
          onClick={(e) => {
            e.stopPropagation();
            copy();
          }}
        >
          {copied ? 'copied' : 'copy'}
        </button>
      ) : null}
    </span>
  );
}

function fallbackCopy(text: string): boolean {
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}
