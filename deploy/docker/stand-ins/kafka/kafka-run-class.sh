#!/bin/bash
# kafka-run-class.sh CLASS ARGS... : the JVM of the stand-in (C1 JIT + serial GC, as scripts/engines.sh)
cls=$1; shift
if [[ $cls == kafka.Kafka ]]; then
  heap=${KAFKA_HEAP_OPTS:--Xmx512m -Xms128m}
  log4j=${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/log4j2.yaml}
else
  # CLI tools: small heap, warnings only (their INFO lines would drown the healthcheck output)
  heap=-Xmx256m
  log4j=-Dlog4j2.level=WARN
fi
# shellcheck disable=SC2086 # the option strings are word lists on purpose
exec java $heap ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError} \
  -Djava.awt.headless=true $log4j ${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' "$cls" "$@"
