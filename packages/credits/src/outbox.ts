/**
 * The shape every outbox shares (credit reservations, request-usage reports), read by the relay
 * (`outbox-relay.ts`). A leaf: the writers and the relay both depend on it, never on each other.
 */
import type { Doc, Filter } from '@subx/ports';

type OutboxStatus = 'none' | 'pending' | 'sent';

/** What the relay reads of an outbox entry. */
export interface OutboxEntry extends Doc {
  outbox_status: OutboxStatus;
  topic: string | null;
  /** Bus message key. */
  key: string | null;
  /** base64 of the serialized event. */
  payload: string | null;
  /** When the pending version was written; an entry rewritten since its publish stays pending. */
  committed_at: number | null;
  created_at: number;
  /** The event's id when it is not the entry's `_id` (an entry rewritten with each new event). */
  event_id?: string;
}

/** One outbox as its writer defines it: where it lives and when an entry may be pruned. */
export interface OutboxSpec {
  collection: string;
  /**
   * Which entries are finished apart from being sent (or having nothing to send): the writer's
   * own condition, e.g. "the credit hold is settled". Only such entries are ever pruned.
   */
  finished: Filter;
  /**
   * The index of the prune query (`finished` + `outbox_status` + `created_at`), named
   * `outbox_prune`. Its keys must stay as first created: an index of the same name with other
   * keys is refused by MongoDB.
   */
  pruneIndex: Record<string, 1 | -1>;
}
