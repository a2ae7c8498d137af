/** A job round's credit reservation (jobs/runner.ts): all its items, or as many as the balance pays for. */
import { isAppError } from '@subx/errors';
import type { CreditLedger, Reservation } from '@subx/credits';
import type { JobDoc } from './model.ts';

/**
 * Reserves what the first `count` items may cost (`prices`, in order); with fewer credits than
 * that, as many items as the balance pays for. Resolves with the items it reserved for.
 */
export async function reserveUpTo(
  credits: CreditLedger,
  job: JobDoc,
  prices: readonly number[],
  count: number,
  requestId: string,
): Promise<{ reservation: Reservation; count: number }> {
  const amount = prices.slice(0, count).reduce((sum, n) => sum + n, 0);
  try {
    const reservation = await credits.reserve({
      accountId: job.account_id,
      operation: 'jobs',
      amount,
      requestId,
    });
    return { reservation, count };
  } catch (error) {
    // Fewer credits than the window needs: run as many items as the balance pays for.
    const available =
      isAppError(error) && error.code === 'INSUFFICIENT_CREDITS' ? error.details?.available : undefined;
    if (typeof available === 'number' && count > 1) {
      let fits = 0;
      for (let sum = 0; fits < count - 1 && sum + prices[fits]! <= available; fits++) sum += prices[fits]!;
      if (fits > 0) return reserveUpTo(credits, job, prices, fits, requestId);
    }
    throw error;
  }
}
