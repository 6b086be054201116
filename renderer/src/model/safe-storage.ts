/**
 * The window's localStorage, or null where there is none (a test's Node, a browser in privacy
 * mode that throws on access): what is remembered in it is best effort, never an error.
 */
export function safeStorage(): Storage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}
