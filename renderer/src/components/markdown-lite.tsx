import type { ReactNode } from 'react';

/**
 * Inline marks (bold, emphasis, code) as React elements: never an HTML string, so a README
 * cannot inject markup. Emphasis is `*word*` hugging its text (a `*` beside a space, as in
 * `a * b`, is a star); a walkthrough's `*same*` showed its stars before it was read here.
 */
function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  const re = /(\*\*[^*]+\*\*|`[^`]+`|\*[^*\s`](?:[^*`]*[^*\s`])?\*)/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const t = m[0];
    out.push(
      t.startsWith('**') ? (
        <b key={m.index}>{inline(t.slice(2, -2))}</b>
      ) : t.startsWith('*') ? (
        <em key={m.index}>{t.slice(1, -1)}</em>
      ) : (
        <code key={m.index}>{t.slice(1, -1)}</code>
      ),
    );
    last = m.index + t.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Enough Markdown for a case walkthrough: headings, bullet lists, paragraphs, fenced code. */
export function MarkdownLite(props: { readonly text: string }) {
  const blocks: ReactNode[] = [];
  const lines = props.text.split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith('```')) {
      const body: string[] = [];
      for (i += 1; i < lines.length && !lines[i].startsWith('```'); i++) body.push(lines[i]);
      blocks.push(
        <pre key={i} className="out">
          {body.join('\n')}
        </pre>,
      );
      i += 1;
    } else if (/^#{1,6} /.test(line)) {
      const level = line.indexOf(' ');
      blocks.push(
        level <= 1 ? (
          <h3 key={i}>{inline(line.slice(level + 1))}</h3>
        ) : (
          <h4 key={i}>{inline(line.slice(level + 1))}</h4>
        ),
      );
      i += 1;
    } else if (/^\s*[-*] /.test(line)) {
      const items: string[] = [];
      while (
        i < lines.length &&
        (/^\s*[-*] /.test(lines[i]) || (/^\s{2,}\S/.test(lines[i]) && items.length))
      ) {
        if (/^\s*[-*] /.test(lines[i])) items.push(lines[i].replace(/^\s*[-*] /, ''));
        else items[items.length - 1] += ` ${lines[i].trim()}`;
        i += 1;
      }
      blocks.push(
        <ul key={i}>
          {items.map((t, k) => (
            <li key={k}>{inline(t)}</li>
          ))}
        </ul>,
      );
    } else if (line.trim() === '') {
      i += 1;
    } else {
      const para: string[] = [];
      while (i < lines.length && lines[i].trim() !== '' && !/^(#{1,6} |\s*[-*] |```)/.test(lines[i]))
        para.push(lines[i++]);
      blocks.push(<p key={i}>{inline(para.join(' '))}</p>);
    }
  }
  return <div className="markdown">{blocks}</div>;
}
