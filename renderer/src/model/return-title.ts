/** What "R" means beside a branch: the discounted return, not the final reward (the compare view names both). */
export const RETURN_TITLE = 'return: the discounted sum of step rewards, the final reward folded in';
