import type { StopPoints } from './held-action.js';

// Apart from held-action.ts (zod schemas): the window's stores start from it before their
// first render, which must build no schema (issue 19.10).

/** No stop inside a step: each step runs whole. */
export const NO_STOP_POINTS: StopPoints = { before_answer: false, before_tool: false };
