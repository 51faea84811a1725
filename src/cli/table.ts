/**
 * Lays out rows in padded columns under a header. With `width`, the widest columns are cut
 * (ending in …) until a row fits, so that a terminal does not wrap the table into a mess.
 * Widths count code points: an emoji is one, as most terminals draw it in one cell or two.
 */
export function formatTable(header: string[], rows: string[][], width?: number): string {
  const gap = "  ";
  const lengthOf = (text: string) => [...text].length;
  const widths = header.map((title, column) =>
    Math.max(lengthOf(title), ...rows.map((row) => lengthOf(row[column] ?? ""))),
  );
  const total = () => widths.reduce((sum, each) => sum + each + gap.length, -gap.length);
  while (width !== undefined && total() > width) {
    const widest = Math.max(...widths);
    if (widest <= 8) break;
    widths[widths.indexOf(widest)] = widest - 1;
  }
  const clip = (text: string, columnWidth: number) => {
    const characters = [...text];
    return characters.length > columnWidth
      ? `${characters.slice(0, columnWidth - 1).join("")}…`
      : text + " ".repeat(columnWidth - characters.length);
  };
  const line = (cells: string[]) =>
    widths
      .map((columnWidth, column) => clip(cells[column] ?? "", columnWidth))
      .join(gap)
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
