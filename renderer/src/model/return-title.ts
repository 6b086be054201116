/**
 * What a return beside a branch is: the discounted return, not the final reward (the compare
 * view names both), nor the plain sum of the step rewards a person sees in the rows.
 */
export const RETURN_TITLE =
  'return: Σ γ^(k−1) · r_k over the steps k = 1…n, each r_k the step’s rewards summed and the final reward added to the last step’s; γ is the task’s rewards.gamma (shown beside the number unless it is 1, when the return is the plain sum)';
