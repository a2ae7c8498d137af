export type TermVector = Map<string, number>;

/** TF-IDF vectors for a list of term lists (the documents are the lists themselves). */
export function tfidfVectors(docs: readonly (readonly string[])[]): TermVector[] {
  const df = new Map<string, number>();
  for (const doc of docs) for (const t of new Set(doc)) df.set(t, (df.get(t) ?? 0) + 1);
  const n = docs.length;
  return docs.map((doc) => {
    const tf = new Map<string, number>();
    for (const t of doc) tf.set(t, (tf.get(t) ?? 0) + 1);
    const v: TermVector = new Map();
    for (const [t, count] of tf) v.set(t, (1 + Math.log(count)) * Math.log(1 + n / (df.get(t) ?? 1)));
    return v;
  });
}

export function norm(v: TermVector): number {
  let s = 0;
  for (const x of v.values()) s += x * x;
  return Math.sqrt(s);
}

export function cosine(a: TermVector, b: TermVector, na = norm(a), nb = norm(b)): number {
  if (na === 0 || nb === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [t, x] of small) {
    const y = large.get(t);
    if (y !== undefined) dot += x * y;
  }
  return dot / (na * nb);
}

/** Sum of vectors (a block of sentences as one bag of weighted terms). */
export function sumVectors(vs: readonly TermVector[]): TermVector {
  const out: TermVector = new Map();
  for (const v of vs) for (const [t, x] of v) out.set(t, (out.get(t) ?? 0) + x);
  return out;
}
