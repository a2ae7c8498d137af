import type { FastifyRequest } from 'fastify';
import type { Admission } from '../access/types.ts';
import type { CreditLedger, Operation, Reservation } from '@subx/credits';
import { noteCreditsRemaining } from './credits-remaining.ts';

export function admissionOf(request: FastifyRequest): Admission {
  if (!request.admission) throw new Error('authenticated route without admission');
  return request.admission;
}

/**
 * Reserves the worst case, runs the work, and releases the whole reservation if the work throws.
 * The work commits what it actually charges (the commit is idempotent, so a release after a
 * successful commit is a no-op); a call that was charged answers the balance it left
 * (X-Credits-Remaining).
 */
export async function withReservation<T>(
  ledger: CreditLedger,
  request: FastifyRequest,
  operation: Operation,
  amount: number,
  work: (reservation: Reservation) => Promise<T>,
): Promise<T> {
  const reservation = await ledger.reserve({
    accountId: admissionOf(request).account.id,
    operation,
    amount,
    requestId: request.id,
  });
  try {
    const result = await work(reservation);
    if (reservation.remaining !== undefined) noteCreditsRemaining(request, reservation.remaining);
    return result;
  } catch (error) {
    await reservation.release().catch((releaseError: unknown) => {
      request.log.error({ err: releaseError }, 'releasing a credit reservation failed');
    });
    throw error;
  }
}
