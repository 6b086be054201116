/** `text` as the start of a sentence: an engine message ("case … already exists") or a branch's name opening a line. */
export function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
