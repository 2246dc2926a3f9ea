// Text fitted to a terminal's width: words kept whole where they fit, a word longer than a line cut.

/**
 * `text` as lines of at most `width` characters, each after `indent` (the first line's indent is
 * the caller's: it starts where the caller put it, so it gets `width - first` characters).
 */
export function wrapText(text: string, width: number, indent = '', first = indent.length): string[] {
  const lines: string[] = [];
  let line = '';
  let room = Math.max(1, width - first);
  const push = (): void => {
    lines.push(line);
    line = '';
    room = Math.max(1, width - indent.length);
  };
  for (const word of text.split(' ')) {
    let rest = word;
    if (line !== '' && line.length + 1 + rest.length > room) push();
    while (rest.length > room) {
      // A word longer than a line (a URL, a pointer): cut, the rest on the lines after.
      if (line !== '') push();
      line = rest.slice(0, room);
      rest = rest.slice(room);
      push();
    }
    line = line === '' ? rest : `${line} ${rest}`;
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${indent}${l}`));
}
