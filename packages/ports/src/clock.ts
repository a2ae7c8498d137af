/** Injected time source, so day boundaries, TTLs and relative dates are testable. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }
  now(): number {
    return this.#now;
  }
  set(at: number | Date): void {
    this.#now = typeof at === 'number' ? at : at.getTime();
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}
