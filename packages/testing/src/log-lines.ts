/**
 * Log-line checks for tests. `JSON.parse` keeps the last of two equal keys silently, so a line
 * like `{"service":"subx","service":"gateway"}` looks fine once parsed; `duplicateKeys` reads the
 * raw text instead and names every key that appears twice in the same object.
 */

/** Keys that occur more than once in one object of the JSON text `line` (dotted paths). */
export function duplicateKeys(line: string): string[] {
  const duplicates: string[] = [];
  // One frame per open object or array: the keys seen so far and the path to it.
  const stack: { keys: Set<string> | null; path: string; lastKey: string }[] = [];
  let i = 0;
  let expectingKey = false;
  while (i < line.length) {
    const ch = line[i];
    if (ch === '"') {
      let j = i + 1;
      let text = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\') {
          text += line.slice(j, j + 2);
          j += 2;
        } else {
          text += line[j];
          j += 1;
        }
      }
      const top = stack.at(-1);
      if (expectingKey && top?.keys) {
        const key = JSON.parse(`"${text}"`) as string;
        if (top.keys.has(key)) duplicates.push(top.path ? `${top.path}.${key}` : key);
        top.keys.add(key);
        top.lastKey = key;
        expectingKey = false;
      }
      i = j + 1;
      continue;
    }
    if (ch === '{' || ch === '[') {
      const parent = stack.at(-1);
      const path = parent ? (parent.path ? `${parent.path}.${parent.lastKey}` : parent.lastKey) : '';
      stack.push({ keys: ch === '{' ? new Set() : null, path, lastKey: '' });
      expectingKey = ch === '{';
    } else if (ch === '}' || ch === ']') {
      stack.pop();
    } else if (ch === ',') {
      expectingKey = stack.at(-1)?.keys !== null && stack.length > 0;
    }
    i += 1;
  }
  return duplicates;
}

/** The JSON log lines of captured output (other lines, such as a banner, are skipped). */
export function jsonLines(output: string): string[] {
  return output.split('\n').filter((line) => line.startsWith('{') && line.endsWith('}'));
}
