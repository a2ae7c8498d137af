import type { SessionConfig } from './config.ts';
import type { Logger } from './types.ts';

/**
 * A small pool of visitor sessions. The platform counts /player calls per visitor (about 1,000 an hour
 * before "try again later"), so one visitorData for the whole service makes it one session. Each session
 * carries its own visitorData (sent in the context and as X-Goog-Visitor-Id), is tied to one proxy when
 * proxies are set, serves `rotateEvery` videos and is then replaced; a session that gets blocked is
 * replaced at once.
 *
 * Fresh visitor data is fetched in the background (`/youtubei/v1/visitor_id` or `/sw.js_data`) by
 * `warmUp` and when a worn-out session is rotated, never on a request's path: a session without one yet
 * sends none and adopts the visitorData of its first answer, so a cold request costs no extra round trip.
 * A session replaced because it was blocked is not bootstrapped: the platform that just blocked us gets
 * no extra call, and the replacement's first answer brings a new visitor anyway.
 */

export interface Session {
  readonly id: number;
  visitorData: string | undefined;
  /** Index into the proxy pool (0 without proxies). */
  proxy: number;
  videos: number;
  retired: boolean;
}

export interface SessionPoolDeps {
  config: SessionConfig;
  proxies: number;
  /** Fetches fresh visitor data for a session (through its proxy); undefined when the platform gave none. */
  bootstrap: (session: Session) => Promise<string | undefined>;
  logger?: Logger | undefined;
}

export class SessionPool {
  readonly #deps: SessionPoolDeps;
  readonly #slots: Session[] = [];
  #next = 0;
  #ids = 0;
  /** Background bootstraps in flight, so close() can wait for them. */
  readonly #pending = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: SessionPoolDeps) {
    this.#deps = deps;
    for (let i = 0; i < deps.config.size; i++) this.#slots.push(this.#fresh(i));
  }

  /** The session for one video's worth of requests; counts the video and rotates a worn-out session. */
  acquire(): Session {
    const slot = this.#next;
    this.#next = (this.#next + 1) % this.#slots.length;
    let s = this.#slots[slot] as Session;
    if (s.videos >= this.#deps.config.rotateEvery) s = this.#replace(slot, 'rotation', true);
    s.videos++;
    return s;
  }

  /** Takes the visitorData of an answer for a session that has none yet. */
  adopt(session: Session, visitorData: string | undefined): void {
    if (visitorData && !session.visitorData && !session.retired) session.visitorData = visitorData;
  }

  /** Replaces a blocked session (new visitor, next proxy); returns the replacement. */
  retire(session: Session, why: string): Session {
    const slot = this.#slots.indexOf(session);
    if (slot < 0) return this.#slots[session.id % this.#slots.length] as Session;
    return this.#replace(slot, why);
  }

  /** Bootstraps every session that has no visitor data yet; bounded by `timeoutMs`, never throws. */
  async warmUp(timeoutMs = 5_000): Promise<void> {
    for (const s of this.#slots) if (!s.visitorData) this.#bootstrap(s);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.#pending]),
      new Promise<void>((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  get sessions(): readonly Session[] {
    return this.#slots;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#pending]);
  }

  #fresh(slot: number, proxy = slot): Session {
    return {
      id: this.#ids++,
      visitorData: undefined,
      proxy: this.#deps.proxies > 0 ? proxy % this.#deps.proxies : 0,
      videos: 0,
      retired: false,
    };
  }

  #replace(slot: number, why: string, bootstrap = false): Session {
    const old = this.#slots[slot] as Session;
    if (old.retired) return old;
    old.retired = true;
    // a new visitor on the next egress address: the old pair is what the platform is counting
    const s = this.#fresh(slot, old.proxy + 1);
    this.#slots[slot] = s;
    this.#deps.logger?.debug({ session: s.id, replaced: old.id, why }, 'youtube session replaced');
    if (bootstrap) this.#bootstrap(s);
    return s;
  }

  #bootstrap(s: Session): void {
    if (this.#closed) return;
    const p = this.#deps
      .bootstrap(s)
      .then((visitor) => this.adopt(s, visitor))
      .catch((err: unknown) => {
        this.#deps.logger?.debug({ err: (err as Error).message }, 'youtube session bootstrap failed');
      })
      .finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }
}
