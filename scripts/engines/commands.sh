# shellcheck shell=bash
# scripts/engines/commands.sh — the subcommands (up, env, down, restart, status) and usage
# Sourced by scripts/engines.sh (its settings and SELF are set there); not run on its own.

parse_engines() {  # sets ENGINES from args (default: all)
  ENGINES=()
  local a e seen=" "
  # No names: the default set (the registry only when named), or every engine for `down`.
  if (($# == 0)); then
    if [[ ${PARSE_ALL:-} == 1 ]]; then ENGINES=("${ALL_ENGINES[@]}"); else ENGINES=("${DEFAULT_ENGINES[@]}"); fi
    return
  fi
  for a in "$@"; do
    e=$(norm_engine "$a")
    [[ $seen == *" $e "* ]] && continue
    seen+="$e "; ENGINES+=("$e")
  done
}

check_dirs() {  # ENGINES_DIR is deleted by `down`: refuse obviously wrong values
  local home=${HOME:-/root} d=$ENGINES_DIR
  if [[ $d != /*/* || $d == "$home" || $home == "$d"/* || $PWD == "$d" || $PWD == "$d"/* ]]; then
    die "refusing to use ENGINES_DIR=$d (it is deleted by down; use a dedicated folder like /tmp/subx-engines)"
  fi
}

take_lock() {
  check_dirs
  mkdir -p "$(dirname "$ENGINES_DIR")" "$ENGINES_CACHE"
  exec 9>"$ENGINES_DIR.lock"
  if ! flock -w 900 9; then die "another engines.sh is holding $ENGINES_DIR.lock for more than 15 minutes"; fi
}

print_env() {  # print export lines for every engine that is up
  local e
  for e in "${ALL_ENGINES[@]}"; do
    if engine_alive "$e"; then engine_env_line "$e"; fi
  done
  return 0
}

cmd_up() {
  parse_engines "$@"
  take_lock
  local t0 e need=()
  t0=$(now)
  mkdir -p "$ENGINES_DIR"
  touch "$ENGINES_DIR/.subx-engines"   # marker: `down` only deletes a directory carrying it
  for e in "${ENGINES[@]}"; do
    if engine_alive "$e" && engine_answers "$e"; then
      log "$e: already running on 127.0.0.1:$(engine_port "$e") (pid $(engine_pid "$e")), reusing it"
    else
      if engine_alive "$e"; then
        log "$e: process $(engine_pid "$e") is alive but does not answer; replacing it"
        stop_engine "$e"
      fi
      need+=("$e")
    fi
  done
  if ((${#need[@]})); then
    # install what is missing; Maven and the Go build run in parallel (network- vs CPU-bound)
    local pids=() names=() i rc=0
    for e in "${need[@]}"; do
      case $e in
        kafka) install_kafka & pids+=($!); names+=(kafka) ;;
        mongo) install_ferretdb & pids+=($!); names+=(mongo) ;;
      esac
    done
    for e in "${need[@]}"; do
      if [[ $e == redis ]]; then (install_redis) || rc=1; fi
      if [[ $e == stt ]]; then (install_stt) || rc=1; fi
    done
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}" || { rc=1; log "${names[$i]}: install failed (see above)"; }
    done
    # After Kafka's: two Maven runs at once on one local repository can corrupt it.
    if [[ " ${need[*]} " == *" registry "* ]]; then (install_registry) || rc=1; fi
    ((rc == 0)) || die "installation failed"
    # launch Kafka first (slowest to boot), then the others, then wait for each
    for e in kafka registry redis mongo stt; do
      if [[ " ${need[*]} " == *" $e "* ]]; then "launch_$e" fresh; fi
    done
    for e in "${need[@]}"; do wait_engine "$e"; done
  fi
  log "up: ${ENGINES[*]} ready in $(($(now) - t0)) s (run data: $ENGINES_DIR, cache: $ENGINES_CACHE)"
  print_env
}

cmd_env() {
  parse_engines "$@"
  local e rc=0
  for e in "${ENGINES[@]}"; do
    if engine_alive "$e"; then
      engine_env_line "$e"
    else
      echo "$SELF: $e is not running (run: scripts/engines.sh up $e)" >&2
      rc=1
    fi
  done
  return $rc
}

cmd_down() {
  PARSE_ALL=1 parse_engines "$@"
  take_lock
  local e
  for e in "${ENGINES[@]}"; do stop_engine "$e"; done
  if (($# == 0)); then
    if [[ -e $ENGINES_DIR/.subx-engines ]]; then
      rm -rf "$ENGINES_DIR"
      log "down: all engines stopped, removed $ENGINES_DIR"
    elif [[ -d $ENGINES_DIR ]]; then
      log "down: $ENGINES_DIR has no .subx-engines marker, not deleting it"
    else
      log "down: nothing was running"
    fi
  else
    for e in "${ENGINES[@]}"; do rm -rf "$(engine_dir "$e")"; done
    log "down: stopped ${ENGINES[*]}"
  fi
}

cmd_restart() {
  local pause=0 args=()
  while (($#)); do
    case $1 in
      --pause) [[ ${2:-} =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--pause needs a number of seconds"; pause=$2; shift 2 ;;
      --pause=*) pause=${1#--pause=}; [[ $pause =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--pause needs a number of seconds"; shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  ((${#args[@]} > 0)) || die "usage: $SELF restart ENGINE... [--pause SECONDS]   (e.g. restart kafka)"
  parse_engines "${args[@]}"
  take_lock
  local e t0
  for e in "${ENGINES[@]}"; do
    t0=$(now)
    if [[ ! -s $(engine_dir "$e")/port ]]; then
      log "$e: was never started, doing a fresh start"
      case $e in redis) install_redis ;; kafka) install_kafka ;; mongo) install_ferretdb ;; stt) install_stt ;; registry) install_registry ;; esac
      "launch_$e" fresh
    else
      stop_engine "$e"
      if [[ $pause != 0 ]]; then log "$e: down, pausing ${pause}s before starting it again"; sleep "$pause"; fi
      "launch_$e" same
    fi
    wait_engine "$e"
    log "$e: restarted on 127.0.0.1:$(engine_port "$e") in $(($(now) - t0)) s"
  done
  print_env
}

cmd_status() {
  local e port pid state
  echo "engines run dir: $ENGINES_DIR"
  echo "engines cache:   $ENGINES_CACHE"
  for e in "${ALL_ENGINES[@]}"; do
    port=$(engine_port "$e" 2>/dev/null || echo -)
    pid=$(engine_pid "$e" 2>/dev/null || echo -)
    if engine_alive "$e"; then
      if engine_answers "$e"; then state="running, answering"; else state="running, NOT answering"; fi
    else
      state="stopped"
    fi
    case $e in
      redis) printf '  %-6s %-24s port %-6s pid %-8s %s\n' redis "$state" "$port" "$pid" \
               "$(command -v redis-server >/dev/null 2>&1 && redis-server --version | awk '{sub("v=", "", $3); print "Redis " $3}' || echo 'redis-server not installed')" ;;
      kafka) printf '  %-6s %-24s port %-6s pid %-8s Kafka %s (KRaft, controller port %s)%s\n' kafka "$state" "$port" "$pid" \
               "$KAFKA_VERSION" "$(cat "$(engine_dir kafka)/controller-port" 2>/dev/null || echo -)" \
               "$([[ -f $(kafka_home)/.complete ]] || echo ', jars not downloaded yet')" ;;
      mongo) printf '  %-6s %-24s port %-6s pid %-8s FerretDB %s (SQLite)%s\n' mongo "$state" "$port" "$pid" \
               "$FERRETDB_VERSION" "$([[ -x $(ferretdb_bin) ]] || echo ', not built yet')" ;;
      stt)   printf '  %-6s %-24s port %-6s pid %-8s faster-whisper speech-to-text (%s)%s\n' stt "$state" "$port" "$pid" \
               "$STT_MODEL_ID" "$([[ -x $(stt_python) ]] || echo ', venv not created yet')" ;;
      registry) printf '  %-6s %-24s port %-6s pid %-8s Apicurio Registry %s (in memory, /apis/ccompat/v7)%s\n' registry "$state" "$port" "$pid" \
               "$APICURIO_VERSION" "$([[ -f $(registry_home)/.complete ]] || echo ', not built yet')" ;;
    esac
  done
  return 0
}

usage() {
  cat >&2 <<EOF
usage: $SELF up [ENGINE...]        start (or reuse) engines; prints export lines on stdout
       $SELF env [ENGINE...]       print export lines for running engines (exit 1 if one is not running)
       $SELF restart ENGINE... [--pause S]
                                    stop, optionally stay down S seconds, start again on the
                                    same port keeping data (simulates an outage)
       $SELF status                human summary
       $SELF down [ENGINE...]      stop engines and remove their run data
ENGINE: redis | kafka | mongo (alias ferretdb) | stt (alias speech) | registry (alias apicurio);
        default: all but registry (\`down\` without names: all).
Env: ENGINES_DIR (default /tmp/subx-engines), ENGINES_CACHE (default ~/.cache/subx-engines),
     STT_VENV (default \$ENGINES_CACHE/speech-venv), STT_MODEL_ID, STT_MODEL_DIR, STT_MULTILINGUAL,
     STT_CPU_THREADS, STT_TIMEOUT,
     APICURIO_VERSION, REGISTRY_TIMEOUT, REGISTRY_JVM_OPTS,
     KAFKA_HEAP_OPTS, KAFKA_EXTRA_CONFIG (extra server.properties lines; @PORT@ and
     @CONTROLLER_PORT@ are replaced by the broker's ports).
EOF
}
