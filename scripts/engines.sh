#!/usr/bin/env bash
# scripts/engines.sh — run REAL Redis, Apache Kafka (KRaft), FerretDB (MongoDB wire protocol) and a
# speech-to-text server (services/speech: faster-whisper behind OpenAI's transcription API)
# natively on loopback for integration tests, and on request a schema registry (Apicurio Registry,
# Confluent-compatible API). No Docker, no network at run time.
#
#   eval "$(scripts/engines.sh up)"            # start all four (or reuse running ones)
#   eval "$(scripts/engines.sh up redis kafka)" # a subset
#   eval "$(scripts/engines.sh up registry)"   # the schema registry (never in the default set)
#   scripts/engines.sh env [ENGINE...]          # print the export lines again (exit 1 if not running)
#   scripts/engines.sh restart kafka [--pause S] # stop (stay down S s) + start on the SAME ports, keeping data
#   scripts/engines.sh status                   # human summary
#   scripts/engines.sh down [ENGINE...]         # stop and delete run data
#
# ENGINE is one of: redis, kafka, mongo (alias: ferretdb), stt (alias: speech), registry (alias: apicurio). stdout carries only `export ...` lines;
# everything else goes to stderr. See scripts/engines.md.
set -euo pipefail

ENGINES_DIR=$(realpath -m "${ENGINES_DIR:-/tmp/subx-engines}")
ENGINES_CACHE=$(realpath -m "${ENGINES_CACHE:-${HOME:-/root}/.cache/subx-engines}")

KAFKA_VERSION=${KAFKA_VERSION:-4.2.0}   # Kafka 4.x only (log4j2 config below)
KAFKA_SCALA=2.13
KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx512m -Xms128m}
# C1-only JIT + serial GC: the broker answers ~2x sooner on a busy small machine and leaves more CPU
# to the tests; plenty for test traffic (set KAFKA_JVM_OPTS to override)
KAFKA_JVM_OPTS=${KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError}
LOG4J2_VERSION=2.24.3                    # same log4j2 line the Kafka 4.x distribution ships
MAVEN_DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1
FERRETDB_VERSION=${FERRETDB_VERSION:-v1.24.0}  # last 1.x release (2.x needs PostgreSQL+DocumentDB)

REDIS_TIMEOUT=${REDIS_TIMEOUT:-30}
KAFKA_TIMEOUT=${KAFKA_TIMEOUT:-90}
MONGO_TIMEOUT=${MONGO_TIMEOUT:-30}
STT_TIMEOUT=${STT_TIMEOUT:-90}   # loading the model takes 2-10 s, longer on a busy machine
STT_MULTILINGUAL=${STT_MULTILINGUAL:-0}   # 1: Whisper base (multilingual) instead of tiny.en
if [[ $STT_MULTILINGUAL == 1 ]]; then STT_MODEL_ID=${STT_MODEL_ID:-whisper-base}; fi
STT_MODEL_ID=${STT_MODEL_ID:-whisper-tiny.en}
STT_CPU_THREADS=${STT_CPU_THREADS:-2}
APICURIO_VERSION=${APICURIO_VERSION:-2.4.2.Final}   # engines/registry.sh says why this line
APICURIO_QUARKUS_VERSION=2.16.4.Final            # the Quarkus its parent POM names
REGISTRY_TIMEOUT=${REGISTRY_TIMEOUT:-90}
REGISTRY_JVM_OPTS=${REGISTRY_JVM_OPTS:--Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError}

DEFAULT_ENGINES=(redis kafka mongo stt)
ALL_ENGINES=(redis kafka mongo stt registry)
SELF=engines.sh

# The parts, next to this file (the script is run from any directory).
ENGINES_LIB=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/engines
# shellcheck source=engines/helpers.sh
. "$ENGINES_LIB/helpers.sh"
# shellcheck source=engines/probes.sh
. "$ENGINES_LIB/probes.sh"
# shellcheck source=engines/install.sh
. "$ENGINES_LIB/install.sh"
# shellcheck source=engines/launch.sh
. "$ENGINES_LIB/launch.sh"
# shellcheck source=engines/registry.sh
. "$ENGINES_LIB/registry.sh"
# shellcheck source=engines/commands.sh
. "$ENGINES_LIB/commands.sh"

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    up|start) cmd_up "$@" ;;
    env) cmd_env "$@" ;;
    down|stop) cmd_down "$@" ;;
    restart) cmd_restart "$@" ;;
    status) cmd_status ;;
    -h|--help|help) usage ;;
    *) usage; exit 2 ;;
  esac
}

main "$@"
