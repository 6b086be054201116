import { flaggedSuccess, FLAGGED_MARK, FLAGGED_TITLE } from '../../../shared/end-words';
import { useLayoutEffect, useRef } from 'react';
import type { BranchSummary } from '../../../shared/contract/models';
import { selectBranchTree, type BranchNode } from '../stores/episodes/episodes-store';
import { IdText } from './id-text';
import { branchName } from '../model/branch-name';
import { useStores } from '../stores/use-stores';
import { returnTitle } from '../model/return-title';
import { discountedReturnText, stepsText } from '../../../shared/format-outcome';
import { branchStatusText, branchStatusWord as statusOf } from '../model/branch-status';

function Node(props: {
  readonly node: BranchNode;
  readonly current: string | null;
  readonly depth: number;
  /** The episode's branches: a fork is named among its siblings at the same step. */
  readonly all: readonly BranchSummary[];
}) {
  const stores = useStores();
  const b = props.node.branch;
  const name = branchName(b, props.all, { short: true });
  const flagged = !b.live && flaggedSuccess(statusOf(b), b.flags);
  return (
    <li>
      <button
        type="button"
        className={`branch-node${b.branch === props.current ? ' current' : ''}`}
        data-testid="branch-node"
        data-branch={b.branch}
        data-status={statusOf(b)}
        onClick={() => void stores.stepper.getState().open(b.branch)}
        title={`${b.branch}: ${b.fork_step !== null ? `forked at step ${b.fork_step}` : 'main branch'}${b.candidate ? ` — ${name}` : ''}`}
      >
        {/* A fork's name in the glyph, as `└ fork@1` was (a span of its own took the room of the
            return on a 1024×700 line); a candidate's longer name in a span of its own. */}
        {props.depth === 0 ? (
          <span className="tree-glyph">●</span>
        ) : b.candidate ? (
          <>
            <span className="tree-glyph">└</span>
            <span className="branch-name" data-testid="branch-name">
              {name}
            </span>
          </>
        ) : (
          <span className="tree-glyph">
            └ <span data-testid="branch-name">{name}</span>
          </span>
        )}
        <IdText id={b.branch} />
        {/* The header's rule: a success QA flagged is amber, not green beside its ⚑. */}
        <span
          className={`badge st-${flagged ? 'flagged' : statusOf(b)}`}
          data-testid="branch-status"
          title={flagged ? FLAGGED_TITLE : undefined}
        >
          {branchStatusText(b)}
          {flagged ? FLAGGED_MARK : ''}
        </span>
        <span className="muted" data-testid="branch-steps">
          {stepsText(b.steps, b.unfinished ?? 0, b.status === null)}
        </span>
        {b.return !== null ? (
          <span className="muted" data-testid="branch-return" title={returnTitle(b.gamma)}>
            {discountedReturnText(b.return, b.gamma)}
          </span>
        ) : null}
        {b.flags ? (
          <span className="flag-count" title="QA flags">
            ⚑{b.flags}
          </span>
        ) : null}
      </button>
      {props.node.children.length ? (
        <ul>
          {props.node.children.map((c) => (
            <Node
              key={c.branch.branch}
              node={c}
              current={props.current}
              depth={props.depth + 1}
              all={props.all}
            />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** An episode's branches drawn as a tree (forks under their parent at their fork step). */
export function BranchTree(props: {
  readonly branches: readonly BranchSummary[];
  readonly current: string | null;
}) {
  const roots = selectBranchTree(props.branches);
  // The tree scrolls in a short box (the timeline's 90 px): the branch on screen is kept in
  // view there, whole (a fork of a fork at 1024×700 was the half-cut last line). Only the tree's
  // own scroll moves, not the panes around it.
  // Also when the box changes size: it gives way to the timeline's rows (a window made shorter,
  // the flags above unfolded), and the branch shown was left below its edge.
  const tree = useRef<HTMLUListElement>(null);
  useLayoutEffect(() => {
    const box = tree.current;
    if (!box) return;
    const keep = () => {
      const node = box.querySelector<HTMLElement>('.branch-node.current');
      if (!node || box.scrollHeight <= box.clientHeight) return;
      // Inside the box's border and padding (no padding in a short window, where the box is one
      // node high: a margin of 2 px of its own scrolled a strip of the node above into view).
      const style = getComputedStyle(box);
      const top = box.getBoundingClientRect().top + box.clientTop + parseFloat(style.paddingTop);
      const bottom = top - parseFloat(style.paddingTop) + box.clientHeight - parseFloat(style.paddingBottom);
      const n = node.getBoundingClientRect();
      // Where it came from too, when both fit: its parent's node from its first line (the name),
      // not the parent's last line ("return 0.20") alone above the branch (rollback at 1024×700).
      const parent = node.closest('ul')?.closest('li')?.querySelector<HTMLElement>(':scope > .branch-node');
      const p = parent?.getBoundingClientRect();
      if (p && n.bottom - p.top <= bottom - top) box.scrollTop += p.top - top;
      else if (n.top < top) box.scrollTop -= top - n.top;
      else if (n.bottom > bottom) box.scrollTop += n.bottom - bottom;
    };
    keep();
    if (typeof ResizeObserver === 'undefined') return;
    const watch = new ResizeObserver(keep);
    watch.observe(box);
    return () => watch.disconnect();
  }, [props.current, props.branches]);
  return (
    <ul ref={tree} className="branch-tree" data-testid="branch-tree">
      {roots.map((n) => (
        <Node key={n.branch.branch} node={n} current={props.current} depth={0} all={props.branches} />
      ))}
    </ul>
  );
}
