// A peer's text made safe to print on a terminal: the characters a terminal acts on (C0 controls,
// DEL, the C1 controls: an OSC 52 clipboard write, a screen clear) shown as `\uXXXX` instead.

// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this escapes
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this escapes
const CONTROLS_AND_BREAKS = /[\u0000-\u001f\u007f-\u009f]/g;
const visible = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with its controls escaped; tab and line feed kept unless `inline` (a table cell, a line of a listing). */
export const terminalText = (text: string, inline = false): string => text.replace(inline ? CONTROLS_AND_BREAKS : CONTROLS, visible);
