/** `text` as the start of a sentence: an engine message ("case … already exists") opening a line of the window. */
export function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
