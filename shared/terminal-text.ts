/**
 * Untrusted text made safe for a terminal. Agent output, tool output, file names and
 * trace content can carry control sequences that a terminal obeys: OSC 52 writes the
 * clipboard, OSC 0/2 change the window title, CSI moves the cursor or erases what was
 * printed, DCS/APC reach terminal extensions, C1 controls (U+0080–U+009F) are their
 * 8-bit spellings, and a lone CR or backspace overwrites a line so one thing is run and
 * another shown. Every place stepbox prints such text to a terminal (the CLI's output
 * and logs, the window's recorded-output terminal) goes through here.
 *
 * Decisions: newlines and tabs are kept; CR LF becomes LF and a lone CR a newline (so a
 * progress bar's states, or a line hidden behind another, are all shown); the Unicode
 * bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069, the
 * "Trojan Source" set) are removed, since they reorder what a reader sees; colours (SGR)
 * go too — a terminal cannot tell a harmless sequence from a harmful one by its start.
 */

/** String-type sequences (OSC, DCS, SOS, PM, APC), in 7-bit and C1 form, to their terminator or the end of the text. */
const STRING_SEQUENCE = String.raw`(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)`;
/** CSI in 7-bit and C1 form: parameters, intermediates, final byte. */
const CSI_SEQUENCE = String.raw`(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?`;
/** Any other escape: ESC, intermediates, one final byte (or a lone ESC). */
const OTHER_ESCAPE = String.raw`\u001b[\u0020-\u002f]*[\u0030-\u007e]?`;

const SEQUENCES = new RegExp(`${STRING_SEQUENCE}|${CSI_SEQUENCE}|${OTHER_ESCAPE}`, 'g');
/** C0 controls but TAB and LF (CR is handled before), DEL, C1 controls, bidi controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is this file's job
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without control sequences or control characters; newlines and tabs kept. */
export function terminalSafe(text: string): string {
  return text.replace(SEQUENCES, '').replace(/\r\n/g, '\n').replace(/\r/g, '\n').replace(CONTROLS, '');
}

/** The characters JSON.stringify leaves raw that a terminal would still act on. */
const JSON_RAW_CONTROLS = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A JSON document made safe for a terminal without changing its data: JSON.stringify
 * already escapes C0 controls (ESC included); DEL, C1 and bidi controls, which it leaves
 * raw, become `\uXXXX` escapes (they can only occur inside strings).
 */
export function jsonTerminalSafe(json: string): string {
  return json.replace(JSON_RAW_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `value` with every string in it (object keys too) through {@link terminalSafe}: for
 * untrusted data shown as text elsewhere than a terminal (the shared HTML file), where an
 * OSC-8 link, a colour or a bidi override would otherwise show raw or reorder what is read.
 */
export function terminalSafeDeep<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => terminalSafeDeep(v)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [terminalSafe(k), terminalSafeDeep(v as unknown)]),
    ) as T;
  return value;
}
