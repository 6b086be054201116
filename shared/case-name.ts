/** What a case name may hold: it names a folder of the case library (`stepbox case new --name`). */
export const CASE_NAME = /^[a-z0-9-]{1,64}$/;

/**
 * Why `name` cannot name a case, in plain words with a name that can, or null. The window asks
 * it before saving: the contract's refusal read "cases.save: name: …", in the dialog and again
 * in the foot bar.
 */
export function caseNameProblem(name: string): string | null {
  if (CASE_NAME.test(name)) return null;
  const fit = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  const tail = fit ? `, e.g. “${fit}”` : '';
  return name.length > 64
    ? `A case name is at most 64 characters: lowercase letters, digits and -${tail}.`
    : `A case name takes only lowercase letters, digits and - (no spaces or capitals)${tail}.`;
}
