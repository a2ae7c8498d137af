#!/bin/bash
# The official image's configuration contract: every KAFKA_* variable except the JVM ones becomes a
# server property (KAFKA_LOG_DIRS -> log.dirs; '__' -> '_', '___' -> '-'), CLUSTER_ID formats the
# log directories on first start, then the broker runs in the foreground.
set -euo pipefail
props=/opt/kafka/config/server.properties
: >"$props"
while IFS='=' read -r name value; do
  case $name in
    KAFKA_HEAP_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_OPTS | KAFKA_LOG4J_OPTS | KAFKA_VERSION) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  key=${name#KAFKA_}
  key=${key,,}
  key=${key//___/-}
  key=${key//__/@}
  key=${key//_/.}
  key=${key//@/_}
  printf '%s=%s\n' "$key" "$value" >>"$props"
done < <(env)
grep -q '^log.dirs=' "$props" || echo 'log.dirs=/var/lib/kafka/data' >>"$props"
# The official image formats with this id when CLUSTER_ID is not given.
CLUSTER_ID=${CLUSTER_ID:-5L6g3nShT-eMCtK--X86sw}
logdir=$(sed -n 's/^log.dirs=//p' "$props" | cut -d, -f1)
if [[ ! -f $logdir/meta.properties ]]; then
  /opt/kafka/bin/kafka-storage.sh format --ignore-formatted -t "$CLUSTER_ID" -c "$props"
fi
exec /opt/kafka/kafka-run-class.sh kafka.Kafka "$props"
