# shellcheck shell=bash
# scripts/engines/launch.sh — starting the servers and waiting until they answer
# Sourced by scripts/engines.sh (its settings and SELF are set there); not run on its own.

# launch_X MODE starts a server without waiting for it: MODE "fresh" wipes its run dir and picks new
# free ports, "same" keeps data and ports (restart). wait_engine X then waits until it answers.
# Launched servers get stdin/stdout/stderr redirected and the lock fd closed, so that
# `eval "$(engines.sh up)"` returns as soon as the script is done.

wait_ready() {  # wait_ready ENGINE DEADLINE_S LOGFILE...
  local e=$1 secs=$2; shift 2
  local port t0 deadline
  port=$(engine_port "$e")
  t0=$(cat "$(engine_dir "$e")/launched-at" 2>/dev/null || now)
  deadline=$((t0 + secs))
  while :; do
    if ! engine_alive "$e"; then
      fail "$e" "server process exited during startup (port $port)" "$@"
    fi
    if "probe_$e" "$port"; then
      log "$e: answering on 127.0.0.1:$port (pid $(engine_pid "$e"), ready $(($(now) - t0)) s after launch)"
      return 0
    fi
    if (($(now) >= deadline)); then
      local pid
      pid=$(engine_pid "$e" 2>/dev/null || true)
      if [[ -n $pid ]]; then stop_pid "$pid" "$(engine_pattern "$e")" "$e" || true; fi
      fail "$e" "did not answer on 127.0.0.1:$port within ${secs}s" "$@"
    fi
    sleep 0.3
  done
}

wait_engine() {
  local e=$1 d
  d=$(engine_dir "$e")
  case $e in
    redis) wait_ready redis "$REDIS_TIMEOUT" "$d/redis.log" "$d/redis.out" ;;
    kafka) wait_ready kafka "$KAFKA_TIMEOUT" "$d/server.log" "$d/kafka.out" ;;
    mongo) wait_ready mongo "$MONGO_TIMEOUT" "$d/ferretdb.log" ;;
    stt) wait_ready stt "$STT_TIMEOUT" "$d/stt.log" ;;
    registry) wait_ready registry "$REGISTRY_TIMEOUT" "$d/registry.log" ;;
  esac
}

launch_redis() {
  local mode=$1 dir port
  dir=$(engine_dir redis)
  if [[ $mode == same && ! -s $dir/port ]]; then mode=fresh; fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data"
    port=$(free_ports 1); echo "$port" >"$dir/port"
  else
    port=$(engine_port redis)
    wait_port_free "$port" 30 || fail redis "port $port still in use, cannot restart on the same port"
  fi
  rm -f "$dir/redis.pid"
  now >"$dir/launched-at"
  log "redis: starting redis-server on 127.0.0.1:$port"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir/data" --daemonize yes \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' --appendonly no \
    </dev/null >>"$dir/redis.out" 2>&1 9>&- ||
    fail redis "redis-server failed to start" "$dir/redis.out" "$dir/redis.log"
  local i
  for ((i = 0; i < 100; i++)); do [[ -s $dir/redis.pid ]] && break; sleep 0.1; done
  [[ -s $dir/redis.pid ]] || fail redis "redis-server did not write its pid file" "$dir/redis.out" "$dir/redis.log"
}

kafka_cp() { echo "$(kafka_home)/libs/*"; }

# JVM flags for short-lived Kafka CLI tools (StorageTool here)
KAFKA_TOOL_JVM=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true)

new_cluster_id() {  # what `kafka-storage.sh random-uuid` prints: url-safe base64 of a random UUID
  python3 -c 'import uuid, base64
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    if not s.startswith("-"): break
print(s)'
}

write_kafka_tools_log4j() {  # warnings and errors of CLI tools to stderr only
  cat >"$1" <<'EOF'
status = warn
name = subx-engines-kafka-tools
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
EOF
}

# A KRaft log dir formatted once per Kafka version (kafka.tools.StorageTool format, node.id=1) and
# copied for every fresh broker: saves a JVM start on each `up`. The cluster id is therefore stable
# per cache. Skipped when KAFKA_EXTRA_CONFIG is set (then the real config is formatted instead).
kafka_storage_template() {
  local home tpl tmp cid
  home=$(kafka_home); tpl="$home/storage-template"
  [[ -f $tpl/.complete ]] && return 0
  tmp="$tpl.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp/data"
  cid=$(new_cluster_id)
  cat >"$tmp/format.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$tmp/data
EOF
  write_kafka_tools_log4j "$tmp/log4j2-tools.properties"
  log "kafka: formatting a KRaft storage template (cluster id $cid)"
  if ! java "${KAFKA_TOOL_JVM[@]}" -Dlog4j2.configurationFile="$tmp/log4j2-tools.properties" -cp "$(kafka_cp)" \
      kafka.tools.StorageTool format -t "$cid" -c "$tmp/format.properties" \
      </dev/null >"$tmp/format.log" 2>&1 9>&-; then
    cp "$tmp/format.log" "$home/format-failed.log" 2>/dev/null || true
    rm -rf "$tmp"
    fail kafka "kafka.tools.StorageTool format failed" "$home/format-failed.log"
  fi
  [[ -f $tmp/data/meta.properties ]] || fail kafka "StorageTool format wrote no meta.properties" "$tmp/format.log"
  touch "$tmp/.complete"
  if [[ -f $tpl/.complete ]]; then rm -rf "$tmp"; else rm -rf "$tpl"; mv "$tmp" "$tpl"; fi
}

launch_kafka() {
  local mode=$1 dir port cport
  dir=$(engine_dir kafka)
  check_java
  if [[ $mode == same && ! -f $dir/server.properties ]]; then
    log "kafka: no previous broker config in $dir, starting a fresh broker"
    mode=fresh
  fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data"
    read -r port cport < <(free_ports 2) || true
    [[ ${port:-} =~ ^[0-9]+$ && ${cport:-} =~ ^[0-9]+$ ]] || fail kafka "could not pick free loopback ports"
    echo "$port" >"$dir/port"; echo "$cport" >"$dir/controller-port"
    cat >"$dir/server.properties" <<EOF
# generated by scripts/engines.sh — single-node KRaft (combined broker + controller)
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=true
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.recovery.threads.per.data.dir=1
EOF
    if [[ -n ${KAFKA_EXTRA_CONFIG:-} ]]; then
      # @PORT@ and @CONTROLLER_PORT@ stand for the ports picked above (a later `listeners=` line
      # wins, so a test can add a listener, e.g. SASL_SSL, beside the PLAINTEXT one the probe uses)
      local extra=${KAFKA_EXTRA_CONFIG//@PORT@/$port}
      printf '# from KAFKA_EXTRA_CONFIG\n%s\n' "${extra//@CONTROLLER_PORT@/$cport}" >>"$dir/server.properties"
    fi
    cat >"$dir/log4j2.properties" <<EOF
# generated by scripts/engines.sh — everything to $dir/server.log, nothing to the console
status = warn
name = subx-engines-kafka
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/server.log
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.kafkaapache.name = org.apache.kafka
logger.kafkaapache.level = INFO
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
    # also handy for tests running TopicCommand / console producer & consumer from the same jars
    write_kafka_tools_log4j "$dir/log4j2-tools.properties"
    if [[ -z ${KAFKA_EXTRA_CONFIG:-} ]]; then
      kafka_storage_template
      cp -R "$(kafka_home)/storage-template/data/." "$dir/data/"
      sed -n 's/^cluster\.id=//p' "$dir/data/meta.properties" >"$dir/cluster-id"
    else
      new_cluster_id >"$dir/cluster-id"
      log "kafka: formatting KRaft storage with KAFKA_EXTRA_CONFIG applied"
      if ! java "${KAFKA_TOOL_JVM[@]}" -Dlog4j2.configurationFile="$dir/log4j2-tools.properties" -cp "$(kafka_cp)" \
          kafka.tools.StorageTool format -t "$(cat "$dir/cluster-id")" -c "$dir/server.properties" \
          </dev/null >"$dir/format.log" 2>&1 9>&-; then
        fail kafka "kafka.tools.StorageTool format failed" "$dir/format.log"
      fi
    fi
  else
    port=$(engine_port kafka); cport=$(cat "$dir/controller-port")
    wait_port_free "$port" 30 || fail kafka "port $port still in use, cannot restart on the same port"
    wait_port_free "$cport" 30 || fail kafka "controller port $cport still in use, cannot restart on the same port"
  fi
  rm -f "$dir/kafka.pid"
  now >"$dir/launched-at"
  log "kafka: starting Kafka $KAFKA_VERSION broker+controller on 127.0.0.1:$port (controller 127.0.0.1:$cport)"
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS / KAFKA_JVM_OPTS are lists of JVM flags
  setsid java $KAFKA_HEAP_OPTS $KAFKA_JVM_OPTS -Djava.awt.headless=true \
    -Dkafka.logs.dir="$dir" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$(kafka_cp)" kafka.Kafka "$dir/server.properties" \
    </dev/null >>"$dir/kafka.out" 2>&1 9>&- &
  echo $! >"$dir/kafka.pid"
}

launch_mongo() {
  local mode=$1 dir port bin
  dir=$(engine_dir mongo); bin=$(ferretdb_bin)
  if [[ $mode == same && ! -s $dir/port ]]; then mode=fresh; fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir/data" "$dir/state"
    port=$(free_ports 1); echo "$port" >"$dir/port"
  else
    port=$(engine_port mongo)
    wait_port_free "$port" 30 || fail mongo "port $port still in use, cannot restart on the same port"
  fi
  rm -f "$dir/mongo.pid"
  now >"$dir/launched-at"
  log "mongo: starting FerretDB $FERRETDB_VERSION (SQLite backend) on 127.0.0.1:$port"
  setsid "$bin" --handler=sqlite --sqlite-url="file:$dir/data/" --listen-addr="127.0.0.1:$port" \
    --state-dir="$dir/state" --debug-addr=- --telemetry=disable --log-level=info --log-format=text \
    </dev/null >>"$dir/ferretdb.log" 2>&1 9>&- &
  echo $! >"$dir/mongo.pid"
}

launch_stt() {
  local mode=$1 dir port model_dir
  dir=$(engine_dir stt)
  if [[ $mode == same && ! -s $dir/port ]]; then mode=fresh; fi
  if [[ $mode == fresh ]]; then
    rm -rf "$dir"; mkdir -p "$dir"
    port=$(free_ports 1); echo "$port" >"$dir/port"
  else
    port=$(engine_port stt)
    wait_port_free "$port" 30 || fail stt "port $port still in use, cannot restart on the same port"
  fi
  rm -f "$dir/stt.pid"
  now >"$dir/launched-at"
  # Resolved before the background launch: the pid file must name the server as soon as it is written.
  model_dir=$(stt_model_dir)
  log "stt: starting the speech-to-text server (faster-whisper, $STT_MODEL_ID) on 127.0.0.1:$port"
  # STT_API_KEY is not passed on: the engine is for loopback tests and the demo
  env -u STT_API_KEY -u METRICS_PORT STT_HOST=127.0.0.1 STT_MODEL_ID="$STT_MODEL_ID" \
    STT_MODEL_DIR="$model_dir" STT_CPU_THREADS="$STT_CPU_THREADS" HF_HUB_OFFLINE=1 \
    setsid "$(stt_python)" "$(stt_dir)/server.py" "$port" \
    </dev/null >>"$dir/stt.log" 2>&1 9>&- &
  echo $! >"$dir/stt.pid"
}
