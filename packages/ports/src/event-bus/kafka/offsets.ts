/** The consumer groups' offsets as the admin client sees them: start pins, commits and lag. */
import type { Admin } from 'kafkajs';
import type { ConsumerLag } from '../port.ts';
import { retrying } from './util.ts';

/**
 * A group without a committed offset for a partition must start where the partition ended when
 * `subscribe` was called. kafkajs's own "latest" is resolved only at its first fetch, so a message
 * published right after `subscribe` resolved could be skipped; instead the consumer starts from
 * the beginning and fast-forwards (commit + seek) to these pinned offsets, keyed `topic/partition`.
 */
export async function pinStartOffsets(
  admin: Admin,
  groupId: string,
  topics: readonly string[],
): Promise<Map<string, bigint>> {
  const pins = new Map<string, bigint>();
  for (const topic of topics) {
    const [committed] = await retrying(() => admin.fetchOffsets({ groupId, topics: [topic] }));
    const uncommitted = new Set(
      (committed?.partitions ?? []).filter((p) => p.offset === '-1').map((p) => p.partition),
    );
    if (uncommitted.size === 0) continue;
    const ends = await retrying(() => admin.fetchTopicOffsets(topic));
    for (const end of ends) {
      if (uncommitted.has(end.partition)) pins.set(`${topic}/${end.partition}`, BigInt(end.high));
    }
  }
  return pins;
}

/** The group's committed offset for one partition, or null when it has none. */
export async function committedOffset(
  admin: Admin,
  groupId: string,
  topic: string,
  partition: number,
): Promise<bigint | null> {
  const [committed] = await retrying(() => admin.fetchOffsets({ groupId, topics: [topic] }));
  const offset = committed?.partitions.find((p) => p.partition === partition)?.offset;
  return offset === undefined || offset === '-1' ? null : BigInt(offset);
}

/** Consumer groups subscribed through one bus: their topics and where a new group starts. */
export type SubscribedGroups = Map<string, { topics: Set<string>; fromBeginning: boolean }>;

/** Lag of each subscribed group and topic: partition end minus committed offset, summed. */
export async function consumerLagOf(admin: Admin, subscribed: SubscribedGroups): Promise<ConsumerLag[]> {
  const lags: ConsumerLag[] = [];
  for (const [groupId, { topics: groupTopics, fromBeginning }] of subscribed) {
    for (const topic of groupTopics) {
      const [ends, [committed]] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId, topics: [topic] }),
      ]);
      let lag = 0;
      for (const end of ends) {
        const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset;
        // No commit yet: the group starts at the log's start (fromBeginning) or at the end it
        // pinned when it subscribed (pinStartOffsets), which is then nothing behind.
        const uncommitted = offset === undefined || offset === '-1';
        const from = uncommitted ? BigInt(fromBeginning ? end.low : end.high) : BigInt(offset);
        const behind = BigInt(end.high) - from;
        if (behind > 0n) lag += Number(behind);
      }
      lags.push({ groupId, topic, lag });
    }
  }
  return lags;
}
