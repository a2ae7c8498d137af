/** Tolerant traversal helpers: InnerTube layouts change often, so nothing here throws on a missing node. */

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Follows a path of keys / indexes; undefined as soon as a step is missing. */
export function at(v: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = v;
  for (const k of path) {
    if (typeof k === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[k < 0 ? cur.length + k : k];
    } else {
      if (!isObj(cur)) return undefined;
      cur = cur[k];
    }
  }
  return cur;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Text of the three shapes YouTube uses: "x", {simpleText}, {runs:[{text}]}, {content}. */
export function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (!isObj(v)) return undefined;
  if (typeof v.simpleText === 'string') return v.simpleText;
  if (typeof v.content === 'string') return v.content;
  if (Array.isArray(v.runs))
    return v.runs.map((r) => (isObj(r) && typeof r.text === 'string' ? r.text : '')).join('');
  return undefined;
}

/** Depth-first search, in document order, for every value stored under `key`. */
export function findAll(root: unknown, key: string, limit = Infinity): unknown[] {
  const out: unknown[] = [];
  const walk = (v: unknown): void => {
    if (out.length >= limit) return;
    if (Array.isArray(v)) {
      for (const item of v) walk(item);
    } else if (isObj(v)) {
      for (const k in v) {
        if (out.length >= limit) return;
        if (k === key) out.push(v[k]);
        walk(v[k]);
      }
    }
  };
  walk(root);
  return out.slice(0, limit);
}

export function findFirst(root: unknown, key: string): unknown {
  return findAll(root, key, 1)[0];
}

/** Continuation token in any of the shapes seen 2024-2026. */
export function continuationToken(node: unknown): string | undefined {
  if (!isObj(node)) return undefined;
  const direct =
    str(at(node, 'continuationEndpoint', 'continuationCommand', 'token')) ??
    str(at(node, 'button', 'buttonRenderer', 'command', 'continuationCommand', 'token')) ??
    str(at(node, 'continuationCommand', 'innertubeCommand', 'continuationCommand', 'token')) ??
    str(at(node, 'continuationCommand', 'token'));
  if (direct) return direct;
  for (const cmd of arr(at(node, 'continuationEndpoint', 'commandExecutorCommand', 'commands'))) {
    const t = str(at(cmd, 'continuationCommand', 'token'));
    if (t) return t;
  }
  const any = findFirst(node, 'continuationCommand');
  return str(at(any, 'token'));
}
