/**
 * The accounts' audit log: one document per recorded change or refusal in `audit_events`, which is
 * also the outbox of the `audit.v1` topic. The event and its pending publish are one document
 * written by one insert, so no event is stored without being published, or published without being
 * stored; `@subx/credits`' outbox relay (the one the usage outboxes use) publishes it as a
 * CloudEvent keyed by account and marks it sent. A retention sweep deletes published events older
 * than AUDIT_RETENTION_DAYS, a bounded number per run.
 *
 * What is stored is what callers pass: they pass ids and names only, never a key, a token, a
 * secret or a password (types.ts).
 */
import { randomBytes } from 'node:crypto';
import { auditEventV1, CLOUD_EVENT_KINDS, TOPICS } from '@subx/contracts';
import type { AuditEventView, AuditPage } from '@subx/contracts/audit';
import { AUDIT_PAGE_LIMIT, DEFAULT_AUDIT_RETENTION_DAYS } from '@subx/contracts/audit';
import { createOutboxRelay, DAY_MS } from '@subx/credits';
import type { OutboxEntry, OutboxRelay, OutboxSpec } from '@subx/credits';
import { Errors } from '@subx/errors';
import type { Clock, DocumentStore, EventBus, Filter, Logger } from '@subx/ports';
import { currentTraceParent, withTimeout } from '@subx/service-kit';
import { countAuditEventsSwept, countAuditWriteFailure } from './metrics.ts';
import type {
  AuditAction,
  AuditActor,
  AuditInput,
  AuditListOptions,
  AuditLog,
  AuditReader,
} from '../domain/audit-log.ts';

export const AUDIT_EVENTS_COLLECTION = 'audit_events';

/**
 * The relay's view of the collection. Its own prune never runs (`pruneEveryMs` below): retention
 * is the sweep's, bounded per run; `finished` and the relay's retention only guard a manual prune.
 */
const AUDIT_OUTBOX: OutboxSpec = {
  collection: AUDIT_EVENTS_COLLECTION,
  finished: { kind: 'audit_event' },
  pruneIndex: { outbox_status: 1, created_at: 1 },
};

type Details = NonNullable<AuditInput['details']>;

interface AuditDoc extends OutboxEntry {
  kind: 'audit_event';
  account_id: string;
  at: string;
  action: AuditAction;
  actor: AuditActor;
  target: { type: string; id: string } | null;
  source_ip: string | null;
  details: Record<string, string | number | boolean | null | string[]>;
  /**
   * `<created_at, 15 digits>:<this process's sequence, 9 digits>:<id>`: sorts by time, then in the
   * order one process recorded them; the list's order and its cursor.
   */
  seq: string;
}

export interface AuditLogOptions {
  store: DocumentStore;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** AUDIT_EVENTS_TOPIC; default `audit.v1`. */
  topic?: string;
  /** AUDIT_RETENTION_DAYS: published events older than this are swept. Default 365. */
  retentionDays?: number;
  /** How often the relay looks for unpublished events (OUTBOX_INTERVAL_MS). Default 1 s. */
  outboxIntervalMs?: number;
  /** How often the retention sweep runs. Default 10 minutes. */
  sweepIntervalMs?: number;
  /** Events one sweep deletes at most (in batches of 500). Default 5,000. */
  sweepMaxPerRun?: number;
  /** Bound on one store write of `record`. Default 2 s. */
  writeTimeoutMs?: number;
}

export interface AuditLogModule extends AuditLog, AuditReader {
  /** Deletes published events past the retention, at most `sweepMaxPerRun`; resolves with how many. */
  sweep(): Promise<number>;
  /** The relay that publishes the events (tests flush it). */
  relay: OutboxRelay;
  /** Creates the indexes, ensures the topic, starts the relay and the sweep. */
  start(): Promise<void>;
  /** Stops the sweep and the relay after a last publish. */
  stop(): Promise<void>;
}

const SWEEP_BATCH = 500;

function newEventId(): string {
  return `aud_${randomBytes(12).toString('hex')}`;
}

let recorded = 0;

function seqOf(createdAt: number, id: string): string {
  recorded = (recorded + 1) % 1_000_000_000;
  return `${String(createdAt).padStart(15, '0')}:${String(recorded).padStart(9, '0')}:${id}`;
}

function encodeCursor(seq: string): string {
  return Buffer.from(seq, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const seq = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{15}:\d{9}:aud_[0-9a-f]+$/.test(seq)) {
    throw Errors.invalidRequest('cursor is not a next_cursor of this list.');
  }
  return seq;
}

/** A plain copy: arrays become arrays of strings, nothing else than the allowed values passes. */
function detailsOf(details: Details | undefined): AuditDoc['details'] {
  const copy: AuditDoc['details'] = {};
  for (const [name, value] of Object.entries(details ?? {})) {
    copy[name] = Array.isArray(value) ? value.map(String) : (value as string | number | boolean | null);
  }
  return copy;
}

function viewOf(doc: AuditDoc): AuditEventView {
  return {
    id: doc._id,
    at: doc.at,
    account_id: doc.account_id,
    action: doc.action,
    actor: { type: doc.actor.type, id: doc.actor.id },
    target: doc.target ? { type: doc.target.type, id: doc.target.id } : null,
    source_ip: doc.source_ip,
    details: doc.details,
  };
}

export function createAuditLog(options: AuditLogOptions): AuditLogModule {
  const { store, bus, clock, logger } = options;
  const topic = options.topic ?? TOPICS.auditEvents.default;
  const retentionMs = (options.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS) * DAY_MS;
  const sweepIntervalMs = options.sweepIntervalMs ?? 10 * 60_000;
  const sweepMaxPerRun = options.sweepMaxPerRun ?? 5_000;
  const writeTimeoutMs = options.writeTimeoutMs ?? 2_000;
  const events = store.collection<AuditDoc>(AUDIT_EVENTS_COLLECTION);
  const relay = createOutboxRelay({
    store,
    bus,
    topic,
    cloudEvent: CLOUD_EVENT_KINDS.auditEvents,
    clock,
    logger,
    outbox: AUDIT_OUTBOX,
    intervalMs: options.outboxIntervalMs ?? 1_000,
    retentionMs,
    pruneEveryMs: Number.POSITIVE_INFINITY,
  });
  let sweepTimer: ReturnType<typeof setInterval> | undefined;
  let sweeping: Promise<number> | undefined;

  async function write(input: AuditInput): Promise<void> {
    if (!input.accountId) throw new Error('an audit event needs an account');
    const now = clock.now();
    const id = newEventId();
    const at = new Date(now).toISOString();
    const details = detailsOf(input.details);
    const actor = { type: input.actor.type, id: input.actor.id ?? null };
    const target = input.target ? { type: input.target.type, id: input.target.id } : null;
    const sourceIp = input.sourceIp ?? null;
    const payload = auditEventV1.AuditEvent.encode({
      envelope: {
        eventId: id,
        occurredAt: at,
        accountId: input.accountId,
        idempotencyKey: id,
        traceParent: currentTraceParent() ?? '',
      },
      action: input.action,
      actor: { type: actor.type, id: actor.id ?? '' },
      ...(target ? { target } : {}),
      sourceIp: sourceIp ?? '',
      detailsJson: JSON.stringify(details),
    }).finish();
    await events.insertOne({
      _id: id,
      kind: 'audit_event',
      account_id: input.accountId,
      at,
      action: input.action,
      actor,
      target,
      source_ip: sourceIp,
      details,
      seq: seqOf(now, id),
      outbox_status: 'pending',
      topic,
      key: input.accountId,
      payload: Buffer.from(payload).toString('base64'),
      committed_at: now,
      created_at: now,
    });
    relay.kick();
  }

  async function record(input: AuditInput): Promise<void> {
    const failed = (err: unknown) => {
      logger.error({ err, action: input.action, account_id: input.accountId }, 'audit event not recorded');
      countAuditWriteFailure();
    };
    try {
      await withTimeout(
        () => write(input),
        writeTimeoutMs,
        () => failed(new Error(`the store did not confirm the write within ${writeTimeoutMs} ms`)),
      );
    } catch (err) {
      failed(err);
    }
  }

  async function list(accountId: string, listOptions: AuditListOptions = {}): Promise<AuditPage> {
    const limit = Math.min(
      AUDIT_PAGE_LIMIT.max,
      Math.max(AUDIT_PAGE_LIMIT.min, Math.trunc(listOptions.limit ?? AUDIT_PAGE_LIMIT.default)),
    );
    const filter: Filter = { account_id: accountId };
    if (listOptions.cursor) filter.seq = { $lt: decodeCursor(listOptions.cursor) };
    const docs = await events.find(filter, { sort: { seq: -1 }, limit: limit + 1 });
    const page = docs.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map(viewOf),
      next_cursor: docs.length > limit && last ? encodeCursor(last.seq) : null,
    };
  }

  async function sweepOnce(): Promise<number> {
    // Only published events: a pending one is still owed to the topic, however old.
    const cutoff = clock.now() - retentionMs;
    let deleted = 0;
    while (deleted < sweepMaxPerRun) {
      const batch = await events.find(
        { outbox_status: 'sent', created_at: { $lt: cutoff } },
        { sort: { created_at: 1 }, limit: Math.min(SWEEP_BATCH, sweepMaxPerRun - deleted) },
      );
      if (batch.length === 0) break;
      const result = await events.deleteMany({ _id: { $in: batch.map((doc) => doc._id) } });
      deleted += result.deletedCount;
      countAuditEventsSwept(result.deletedCount);
      if (batch.length < SWEEP_BATCH) break;
    }
    return deleted;
  }

  async function sweep(): Promise<number> {
    while (sweeping) await sweeping;
    sweeping = sweepOnce().finally(() => {
      sweeping = undefined;
    });
    return sweeping;
  }

  return {
    record,
    list,
    sweep,
    relay,
    async start() {
      await events.createIndex({ account_id: 1, seq: -1 }, { name: 'audit_by_account' });
      await relay.init();
      await bus.ensureTopics([topic]).catch((err: unknown) => {
        // The relay keeps the events pending until the bus accepts them.
        logger.warn({ err, topic }, 'could not ensure the audit topic');
      });
      relay.start();
      sweepTimer = setInterval(() => {
        void sweep().catch((err: unknown) => logger.warn({ err }, 'audit retention sweep failed'));
      }, sweepIntervalMs);
      sweepTimer.unref?.();
    },
    async stop() {
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = undefined;
      await sweeping?.catch(() => {});
      await relay.stop();
      await relay.flush();
    },
  };
}
