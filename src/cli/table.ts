/**
 * Lays out rows in padded columns under a header, within `width` columns (default 80): when a
 * row is too wide, the widest column narrows and its cells wrap onto more lines at spaces, so
 * that nothing is cut. Widths count code points: an emoji is one, as most terminals draw it in
 * one cell or two.
 */
export function formatTable(header: string[], rows: string[][], width = 80): string {
  const gap = "  ";
  const widths = header.map((title, column) =>
    Math.max(lengthOf(title), ...rows.map((row) => lengthOf(row[column] ?? ""))),
  );
  const total = () => widths.reduce((sum, each) => sum + each + gap.length, -gap.length);
  while (total() > width) {
    const widest = Math.max(...widths);
    if (widest <= 12) break;
    widths[widths.indexOf(widest)] = widest - 1;
  }
  const lines = (cells: string[]) => {
    const wrapped = widths.map((columnWidth, column) => wrap(cells[column] ?? "", columnWidth));
    const height = Math.max(...wrapped.map((cell) => cell.length));
    return Array.from({ length: height }, (_, line) =>
      wrapped
        .map((cell, column) => pad(cell[line] ?? "", widths[column] ?? 0))
        .join(gap)
        .trimEnd(),
    );
  };
  return [header, ...rows].flatMap(lines).join("\n");
}

/**
 * Text broken into lines of at most `width` code points, at spaces where it can, inside a
 * word where it must. Never drops a character but the spaces it breaks at.
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const joined = line === "" ? word : `${line} ${word}`;
    if (lengthOf(joined) <= width) {
      line = joined;
      continue;
    }
    if (line !== "") lines.push(line);
    let rest = [...word];
    while (rest.length > width) {
      lines.push(rest.slice(0, width).join(""));
      rest = rest.slice(width);
    }
    line = rest.join("");
  }
  lines.push(line);
  return lines;
}

/**
 * `label` and the wrapped `text`, its lines after the first indented under the text's start:
 * `  expected: ...` as a block that fits `width`.
 */
export function labelled(label: string, text: string, width = 80): string {
  const indent = lengthOf(label);
  return wrap(text, Math.max(20, width - indent))
    .map((line, index) => (index === 0 ? label : " ".repeat(indent)) + line)
    .join("\n");
}

function lengthOf(text: string): number {
  return [...text].length;
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - lengthOf(text)));
}
