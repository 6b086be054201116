/**
 * What a return beside a branch is, on hover: the discounted return, not the final reward (the
 * compare view names both), nor the plain sum of the step rewards a person sees in the rows.
 * It first says in words what `(γ=0.99)` beside the number is: `discounted return, γ = 0.99`.
 */
export function returnTitle(gamma?: number): string {
  const said = gamma !== undefined && gamma !== 1 ? `discounted return, γ = ${gamma}` : 'return';
  return `${said}: Σ γ^(k−1) · r_k over the steps k = 1…n, each r_k the step’s rewards summed and the final reward added to the last step’s; γ is the task’s rewards.gamma (shown beside the number unless it is 1, when the return is the plain sum)`;
}
