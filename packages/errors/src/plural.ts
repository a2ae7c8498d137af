/**
 * A count with its noun, singular or plural as English has it: "1 credit", "0 credits", "2 credits".
 * One helper for every message that names a count (errors, MCP texts, dashboard pages), so that no
 * place writes "1 credits" by hand.
 */
const english = new Intl.PluralRules('en-US');

/** `plural(1, 'credit')` → "1 credit"; irregular plurals are passed: `plural(2, 'reply', 'replies')`. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${english.select(count) === 'one' ? singular : pluralForm}`;
}

/** "is" for one, "are" otherwise: `${plural(n, 'credit')} ${isAre(n)} available`. */
export function isAre(count: number): 'is' | 'are' {
  return english.select(count) === 'one' ? 'is' : 'are';
}
