import type { FastifyReply, FastifyRequest } from 'fastify';

/** The balance after each charged call, until its answer is sent (a request is collected with it). */
const remainingOf = new WeakMap<FastifyRequest, number>();

/** Remembers the balance a charged call left (withReservation, after the commit). */
export function noteCreditsRemaining(request: FastifyRequest, credits: number): void {
  remainingOf.set(request, credits);
}

/** X-Credits-Remaining on the answer of a call that was charged; absent on every other answer. */
export function setCreditsRemainingHeader(request: FastifyRequest, reply: FastifyReply): void {
  const credits = remainingOf.get(request);
  if (credits !== undefined) reply.header('x-credits-remaining', String(credits));
}
