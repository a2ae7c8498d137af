#!/usr/bin/env bash
# Creates the subx Kafka topics and their .dlq twins (idempotent: existing topics are left alone).
#
# Runs wherever Kafka's kafka-topics.sh is available:
#   - in docker-compose, as the one-shot `kafka-init` service (apache/kafka image);
#   - against any cluster from a machine with a Kafka distribution:
#       KAFKA_BOOTSTRAP=broker:9092 KAFKA_TOPICS_BIN=/opt/kafka/bin/kafka-topics.sh scripts/kafka-topics.sh
# Env: KAFKA_BOOTSTRAP (default localhost:9092), KAFKA_TOPIC_PARTITIONS (3), KAFKA_JOBS_PARTITIONS
#      (64: the two extraction jobs topics),
#      KAFKA_TOPIC_REPLICATION (1), KAFKA_TOPICS_BIN (kafka-topics.sh on PATH, else /opt/kafka/bin/...),
#      KAFKA_WAIT_SECONDS (60): how long to wait for the broker to answer,
#      KAFKA_TOPIC_RETENTION_MS (604800000, 7 days): how long a topic keeps its messages. Every subx
#      topic carries account ids; the stores are the durable record (docs/events.md, "Retention").
#      The services read the same variable for the topics they create, with the same default
#      (DEFAULT_KAFKA_TOPIC_RETENTION_MS, packages/service-kit/src/net/kafka-topic-retention-env.ts);
#      test/deploy/compose-file.test.ts fails when the two defaults differ.
set -euo pipefail

BOOTSTRAP=${KAFKA_BOOTSTRAP:-localhost:9092}
PARTITIONS=${KAFKA_TOPIC_PARTITIONS:-3}
REPLICATION=${KAFKA_TOPIC_REPLICATION:-1}
WAIT_SECONDS=${KAFKA_WAIT_SECONDS:-60}
RETENTION_MS=${KAFKA_TOPIC_RETENTION_MS:-604800000}
BIN=${KAFKA_TOPICS_BIN:-$(command -v kafka-topics.sh || echo /opt/kafka/bin/kafka-topics.sh)}

# The topics of @subx/contracts (packages/contracts/src/topics.ts, docs/events.md); the test of this
# script (test/deploy/compose-file.test.ts) fails when one is missing here.
TOPICS=(extract.jobs.v1 extract.bulk-jobs.v1 extract.results.v1 jobs.lifecycle.v1 watches.lifecycle.v1
  billing.credit-usage.v1 billing.request-usage.v1 audit.v1 accounts.v1)

if [ ! -x "$BIN" ]; then
  echo "kafka-topics: $BIN not found; set KAFKA_TOPICS_BIN" >&2
  exit 1
fi

deadline=$((SECONDS + WAIT_SECONDS))
until "$BIN" --bootstrap-server "$BOOTSTRAP" --list >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "kafka-topics: broker $BOOTSTRAP did not answer within ${WAIT_SECONDS}s" >&2
    exit 1
  fi
  sleep 2
done

# Extraction jobs, batch and bulk: the partition count caps how many worker members take jobs
# (docs/events.md, "Scale and operations"), and can only grow later (which moves keys).
JOBS_PARTITIONS=${KAFKA_JOBS_PARTITIONS:-64}

for base in "${TOPICS[@]}"; do
  count=$PARTITIONS
  case $base in extract.jobs.v1 | extract.bulk-jobs.v1) count=$JOBS_PARTITIONS ;; esac
  for topic in "$base" "$base.dlq"; do
    "$BIN" --bootstrap-server "$BOOTSTRAP" --create --if-not-exists --topic "$topic" \
      --partitions "$count" --replication-factor "$REPLICATION" --config "retention.ms=$RETENTION_MS"
  done
done

# The group coordinator: a fresh broker creates __consumer_offsets on the first group lookup and
# loads its partitions for a few seconds, answering NOT_COORDINATOR meanwhile; services that start
# then fail to join their groups. Ask until every partition has a leader, so they start on a
# broker that is ready (bounded like the wait above; a broker that never gets there is reported,
# and the services still retry on their own).
GROUPS_BIN=$(dirname "$BIN")/kafka-consumer-groups.sh
coordinator_ready() {
  local group offsets
  group=$("$GROUPS_BIN" --bootstrap-server "$BOOTSTRAP" --describe --group subx-coordinator-check 2>&1 || true)
  offsets=$("$BIN" --bootstrap-server "$BOOTSTRAP" --describe --topic __consumer_offsets 2>/dev/null || true)
  [[ ($group == *"does not exist"* || $group == *"not found"*) && $offsets == *"Leader: "[0-9]* && $offsets != *"Leader: none"* ]]
}
if [ -x "$GROUPS_BIN" ]; then
  deadline=$((SECONDS + WAIT_SECONDS))
  until coordinator_ready; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "kafka-topics: the group coordinator on $BOOTSTRAP was not ready within ${WAIT_SECONDS}s" >&2
      break
    fi
    sleep 1
  done
fi

echo "kafka-topics: topics on $BOOTSTRAP:"
"$BIN" --bootstrap-server "$BOOTSTRAP" --list
