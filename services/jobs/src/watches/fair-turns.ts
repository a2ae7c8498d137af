/**
 * Which due watches a poll runs, and in what order: accounts take turns (each account's soonest
 * watch before anyone's second), and one account runs at most `perAccount` watches per poll, so an
 * account with two hundred due watches delays the others by at most its share. The store is asked
 * again without the accounts that had their share, so they cannot fill the page either.
 */
import type { WatchDoc } from './model.ts';
import type { WatchStore } from './store.ts';

/** Pages of due watches one poll reads at most while looking for other accounts' watches. */
const MAX_LOOKS = 5;

export async function fairTurns(
  store: Pick<WatchStore, 'due'>,
  options: { nowMs: number; limit: number; perAccount: number },
): Promise<WatchDoc[]> {
  const byAccount = new Map<string, WatchDoc[]>();
  const full: string[] = [];
  const taken: string[] = [];
  for (let look = 0; look < MAX_LOOKS && taken.length < options.limit; look++) {
    const page = await store.due(options.nowMs, options.limit, { accounts: full, watches: taken });
    if (page.length === 0) break;
    for (const watch of page) {
      const mine = byAccount.get(watch.account_id) ?? [];
      if (mine.length >= options.perAccount || taken.length >= options.limit) continue;
      mine.push(watch);
      byAccount.set(watch.account_id, mine);
      taken.push(watch._id);
      if (mine.length === options.perAccount) full.push(watch.account_id);
    }
  }
  // Round robin: every account's first, then every account's second, in order of first due.
  const turns: WatchDoc[] = [];
  for (let round = 0; turns.length < taken.length; round++) {
    for (const mine of byAccount.values()) if (mine[round]) turns.push(mine[round]!);
  }
  return turns;
}
