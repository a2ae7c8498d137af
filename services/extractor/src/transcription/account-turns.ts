/**
 * Slots for work that holds a scarce resource (the transcriber's: a spooled download and a model
 * request), taken in turns between accounts. At most `slots` run at once; the others wait in a
 * queue of bounded length, at most `perAccount` of them for one account, and a freed slot goes to
 * the next account in turn (round robin), not to whoever queued first: one account's burst cannot
 * make another's request wait behind all of it. A wait ends when its turn comes, when its caller's
 * signal aborts, or at its `until` time, whichever is first; a full queue refuses at once.
 */
import { AppError } from '@subx/errors';

export interface AccountTurnsOptions {
  /** Work running at once. */
  slots: number;
  /** Waiting requests in all. */
  maxWaiting: number;
  /** Waiting requests of one account. */
  perAccount: number;
}

export interface TurnRequest {
  /** Whose turn it is; '' is one anonymous account. */
  account: string;
  signal?: AbortSignal | undefined;
  /** Epoch ms: the wait gives up then (503, retryable). */
  until?: number | undefined;
}

interface Waiter {
  readonly account: string;
  readonly grant: () => void;
}

/** How long a refused caller is told to wait before it tries again. */
const RETRY_AFTER_SECONDS = 30;

/** 503 SERVICE_UNAVAILABLE, retryable: the transcriber has no turn for this request now. */
function busy(why: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `The transcriber is busy: ${why}. Nothing was started; retry later.`,
    {
      retryAfterSeconds: RETRY_AFTER_SECONDS,
    },
  );
}

export class AccountTurns {
  readonly #options: AccountTurnsOptions;
  #running = 0;
  /** Per account, its waiters in order; the Map's order is the accounts' turn order. */
  readonly #queues = new Map<string, Waiter[]>();
  #waiting = 0;

  constructor(options: AccountTurnsOptions) {
    this.#options = options;
  }

  /** Requests waiting now (for tests and metrics). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Requests holding a slot now (for metrics). */
  get running(): number {
    return this.#running;
  }

  /** Runs `work` in a slot, once this request's turn comes. */
  async run<T>(request: TurnRequest, work: () => Promise<T>): Promise<T> {
    await this.#take(request);
    try {
      return await work();
    } finally {
      this.#release();
    }
  }

  #take(request: TurnRequest): Promise<void> {
    request.signal?.throwIfAborted();
    if (this.#running < this.#options.slots && this.#waiting === 0) {
      this.#running += 1;
      return Promise.resolve();
    }
    if (this.#waiting >= this.#options.maxWaiting)
      return Promise.reject(busy(`${this.#waiting} requests are waiting for it`));
    const queue = this.#queues.get(request.account) ?? [];
    if (queue.length >= this.#options.perAccount)
      return Promise.reject(busy(`this account already has ${queue.length} requests waiting for it`));
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        account: request.account,
        grant: () => {
          done();
          resolve();
        },
      };
      const leave = (error: unknown): void => {
        done();
        this.#remove(waiter);
        reject(error);
      };
      const onAbort = (): void => leave(request.signal!.reason);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      if (request.until !== undefined) {
        timer = setTimeout(
          () => leave(busy('no turn came in the time this request had')),
          Math.max(0, request.until - Date.now()),
        );
      }
      queue.push(waiter);
      this.#queues.set(request.account, queue);
      this.#waiting += 1;
    });
  }

  /** A finished slot goes to the next account in turn, without being freed in between. */
  #release(): void {
    const next = this.#queues.entries().next();
    if (next.done) {
      this.#running -= 1;
      return;
    }
    const [account, queue] = next.value;
    const waiter = queue.shift()!;
    this.#waiting -= 1;
    // The account goes to the back of the turn order (with its remaining waiters), or leaves it.
    this.#queues.delete(account);
    if (queue.length > 0) this.#queues.set(account, queue);
    waiter.grant();
  }

  #remove(waiter: Waiter): void {
    const queue = this.#queues.get(waiter.account);
    const at = queue?.indexOf(waiter) ?? -1;
    if (!queue || at < 0) return;
    queue.splice(at, 1);
    this.#waiting -= 1;
    if (queue.length === 0) this.#queues.delete(waiter.account);
  }
}
