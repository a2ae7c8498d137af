#!/usr/bin/env bash
# The cluster suite (`bash scripts/cluster.sh test`, a step of .ci/run): the chart installed by
# scripts/cluster.sh up, checked as an SRE would on a real cluster. Sourced by scripts/cluster.sh
# after `up` (KUBECONFIG set). Each check prints PASS/FAIL with its evidence; the suite ends with
# the line `cluster: N passed, N failed` and fails when any check did.
#
# Clients outside the pods call the gateway through its cluster IP, which kube-proxy translates on
# this machine (no port-forward in between), so a rolling restart is seen as a user sees it.

YT_MANUAL_AUTO=F1xioXWb8CY # packages/testing fake-youtube videoIds.manualAndAuto
YT_BATCH=(it3OtbTxQk0 Kn56bMZ9OE8) # autoOnly, audioTracks (English): extracted first, in the deletion check
ROLL_MAX_REQUESTS=${CLUSTER_ROLL_MAX_REQUESTS:-3000}
ROLL_TIMEOUT=${CLUSTER_ROLL_TIMEOUT:-300}
SUITE_TMP=$RUN_DIR/suite
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS  $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }
k() { kubectl_ -n "$NAMESPACE" "$@"; }
component_pods() { k get pods -l "app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }

# gw METHOD PATH [BODY] : a call to the gateway's cluster IP; prints the body, then the status line.
gw() {
  local args=(-s --max-time 70 -o - -w '\n%{http_code}' -X "$1" "http://$GATEWAY_IP:8080$2" -H 'content-type: application/json')
  [ -z "${API_KEY:-}" ] || args+=(-H "X-API-Key: $API_KEY")
  [ -z "${3:-}" ] || args+=(--data "$3")
  curl "${args[@]}"
}
# admin METHOD PATH [BODY] : a call to the admin API's own Service (never the public one) with
# ci/cluster-values.yaml's token; prints the body, then the status line.
admin() {
  local args=(-s --max-time 30 -o - -w '\n%{http_code}' -X "$1" "http://$ADMIN_IP:8081$2"
    -H "Authorization: Bearer ci-cluster-admin-token-0123456789abcdef")
  [ -z "${3:-}" ] || args+=(-H 'content-type: application/json' --data "$3")
  curl "${args[@]}"
}
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=new Function("r","return ("+process.argv[1]+")")(JSON.parse(s));console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }

# in_pod NAME IMAGE CMD... : runs CMD in a pod of the test namespace (non-root); prints its output.
in_pod() {
  local name=$1 image=$2
  shift 2
  k delete pod "$name" --ignore-not-found --wait=true >/dev/null 2>&1
  k run "$name" --image="$image" --image-pull-policy=Never --restart=Never \
    --overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":1000},"enableServiceLinks":false}}' \
    --command -- "$@" >/dev/null
  local i phase
  for i in $(seq 1 120); do
    phase=$(k get pod "$name" -o jsonpath='{.status.phase}' 2>/dev/null)
    case $phase in Succeeded | Failed) break ;; esac
    sleep 1
  done
  k logs "$name" 2>&1
  k delete pod "$name" --wait=false >/dev/null 2>&1
  [ "$phase" = Succeeded ]
}
# busybox's own resolver (nslookup) asks CoreDNS directly; its wget would need glibc's NSS, which a
# static busybox lacks, so HTTP from a pod goes through node in the gateway image instead.
toolbox() { in_pod "$1" "$TOOLBOX_IMAGE" /bin/busybox sh -c "$2"; }

gateway_image() { k get deploy "$RELEASE-gateway" -o jsonpath='{.spec.template.spec.containers[0].image}'; }

check_deployments() {
  if k wait --for=condition=available deploy -l "app.kubernetes.io/instance=$RELEASE" --timeout=300s >/dev/null; then
    pass "every Deployment available: $(k get deploy -l "app.kubernetes.io/instance=$RELEASE" -o jsonpath='{range .items[*]}{.metadata.name}={.status.availableReplicas}/{.spec.replicas} {end}')"
  else
    fail "Deployments not available: $(k get deploy -o wide 2>&1 | tr '\n' ';')"
  fi
}

check_probes() {
  local bad
  # Every subx container declares both probes, is ready, and was never restarted by them.
  bad=$(k get pods -l "app.kubernetes.io/instance=$RELEASE" -o json | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const bad = [];
      for (const p of JSON.parse(s).items) {
        // the helm test hook pod runs to completion, it has no probes
        if (p.metadata.deletionTimestamp || (p.metadata.annotations || {})["helm.sh/hook"]) continue;
        for (const c of p.spec.containers) {
          const st = (p.status.containerStatuses || []).find((x) => x.name === c.name) || {};
          if (!c.readinessProbe || !c.livenessProbe) bad.push(`${p.metadata.name}: no probes`);
          if (!st.ready) bad.push(`${p.metadata.name}: not ready`);
          if (st.restartCount) bad.push(`${p.metadata.name}: ${st.restartCount} restarts`);
        }
      }
      console.log(bad.join("; "));
    });')
  if [ -z "$bad" ]; then
    pass "probes: every pod ready, liveness and readiness declared, no restarts"
  else
    fail "probes: $bad"
    # why: the last termination and the probe events, and the previous container's last lines
    local pod
    for pod in $(grep -o "$RELEASE-[a-z]*-[a-z0-9]*-[a-z0-9]*: [0-9]* restarts" <<<"$bad" | cut -d: -f1 | sort -u); do
      echo "      $pod last state: $(k get pod "$pod" -o jsonpath='{.status.containerStatuses[0].lastState.terminated}' 2>&1)"
      k get events --field-selector "involvedObject.name=$pod" -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>&1 |
        grep -v '^Scheduled\|^Pulled\|^Created\|^Started' | tail -5 | sed 's/^/      /'
      k logs "$pod" --previous --tail=5 2>&1 | cut -c1-300 | sed 's/^/      /'
    done
  fi
}

check_dns() {
  local script="" svc out want got bad=""
  for svc in gateway extractor comments ai billing jobs dashboard; do
    script+="/bin/busybox nslookup $RELEASE-$svc.$NAMESPACE.svc.cluster.local; /bin/busybox nslookup $RELEASE-$svc; "
  done
  out=$(toolbox dns-check "$script")
  for svc in gateway extractor comments ai billing jobs dashboard; do
    want=$(k get svc "$RELEASE-$svc" -o jsonpath='{.spec.clusterIP}')
    got=$(printf '%s\n' "$out" | grep -A2 "Name:.*$RELEASE-$svc" | sed -n 's/^Address: *//p' | sort -u | tr '\n' ' ')
    [ "$got" = "$want " ] || bad+="$RELEASE-$svc -> '$got' (cluster IP $want); "
  done
  [ -z "$bad" ] && pass "CoreDNS: every Service resolves to its cluster IP, by full and by short name" ||
    fail "CoreDNS: $bad output: $(printf '%s' "$out" | tail -5 | tr '\n' ' ')"
}

check_in_cluster_health() {
  local out
  out=$(in_pod health-check "$(gateway_image)" node -e "
    fetch('http://$RELEASE-gateway:8080/health', { signal: AbortSignal.timeout(10000) })
      .then(async (r) => { console.log(r.status, await r.text()); process.exit(r.ok ? 0 : 1); })
      .catch((e) => { console.log(String(e.cause ?? e)); process.exit(1); });")
  if grep -q '"status":"ok"' <<<"$out" && ! grep -q '"down"' <<<"$out"; then
    pass "in-cluster GET http://$RELEASE-gateway:8080/health: $out"
  else
    fail "in-cluster /health: $out"
  fi
}

check_helm_test() {
  if [ -d deploy/helm/subx/templates/tests ]; then
    if "$HELM" test "$RELEASE" -n "$NAMESPACE" --timeout 5m --logs >"$SUITE_TMP/helm-test.log" 2>&1; then
      pass "helm test $RELEASE ($(grep -c '^TEST SUITE\|Phase: *Succeeded' "$SUITE_TMP/helm-test.log") hooks succeeded)"
    else
      fail "helm test: $(tail -20 "$SUITE_TMP/helm-test.log" | tr '\n' ' ')"
    fi
  else
    echo "NOTE  the chart has no helm test hook (templates/tests/) on this branch: the in-cluster health check stands in"
  fi
}

check_helm_test_plain() {
  if "$HELM" test "$RELEASE" -n "$NAMESPACE" --timeout 5m --logs >"$SUITE_TMP/helm-test-plain.log" 2>&1 &&
    grep -q 'smoke: skip extract: no API key' "$SUITE_TMP/helm-test-plain.log" &&
    grep -q 'smoke: PASS (3 checks, 2 skipped)' "$SUITE_TMP/helm-test-plain.log"; then
    pass "helm test on the plain install: the keyless checks pass, the keyed ones skipped with why"
  else
    fail "helm test on the plain install: $(tail -20 "$SUITE_TMP/helm-test-plain.log" | tr '\n' ' ')"
  fi
}

check_crds() {
  local rendered=$SUITE_TMP/monitoring.yaml
  "$HELM" template "$RELEASE" deploy/helm/subx -f "$CI_VALUES" -n "$NAMESPACE" \
    --show-only templates/servicemonitor.yaml --show-only templates/prometheusrule.yaml >"$rendered"
  local installed
  installed=$(k get servicemonitor,prometheusrule -l "app.kubernetes.io/instance=$RELEASE" -o name 2>&1)
  if grep -q servicemonitor <<<"$installed" && grep -q prometheusrule <<<"$installed" &&
    k apply --dry-run=server --validate=strict -f "$rendered" >/dev/null 2>"$SUITE_TMP/crd.err"; then
    # and the schema really is enforced: an unknown field and a wrong type are refused
    sed 's/^spec:$/spec:\n  notAField: true/' "$rendered" >"$SUITE_TMP/monitoring-bad.yaml"
    if k apply --dry-run=server --validate=strict -f "$SUITE_TMP/monitoring-bad.yaml" >/dev/null 2>&1; then
      fail "CRDs: a ServiceMonitor with an unknown field was accepted (schema not enforced)"
    else
      pass "ServiceMonitor and PrometheusRule installed and valid against the prometheus-operator $PROMETHEUS_OPERATOR_VERSION CRDs (an unknown field is refused)"
    fi
  else
    fail "CRDs: installed: $installed; $(head -5 "$SUITE_TMP/crd.err" 2>/dev/null)"
  fi
}

create_key() {
  local out status
  out=$(admin POST /admin/v1/accounts '{"tier":"pro","credits":100000}')
  status=$(printf '%s' "$out" | tail -1)
  API_KEY=$(printf '%s' "$out" | head -n -1 | json r.api_key 2>/dev/null || true)
  [ "$status" = 201 ] && [ -n "$API_KEY" ] && pass "admin API: a pro account and its key created (201)" ||
    { fail "admin API: POST /admin/v1/accounts -> $status $(printf '%s' "$out" | head -c 300)"; return 1; }
}

check_extract() {
  local out
  out=$(gw POST /api/v1/extract "{\"url\":\"https://www.youtube.com/watch?v=$YT_MANUAL_AUTO\"}")
  if [ "$(printf '%s' "$out" | tail -1)" = 200 ] &&
    [ "$(printf '%s' "$out" | head -n -1 | json 'r.video_id + " " + (r.subtitles.length > 0)')" = "$YT_MANUAL_AUTO true" ]; then
    pass "extract $YT_MANUAL_AUTO on the recorded platform: 200, $(printf '%s' "$out" | head -n -1 | json 'r.subtitles.length') segments"
  else
    fail "extract: $(printf '%s' "$out" | head -c 400)"
  fi
}

# decisions.md: a regenerated or revoked key is refused on every gateway replica once the admin
# call returns. Both replicas cache the key first (20 requests through the Service land on both),
# then the key is regenerated and revoked through the admin Service; each call answers only once
# every replica confirmed (a replica that does not costs the call 2 s, so a slower one is a FAIL).
# An account of its own, so the suite's key (and the helm test's Secret) stays valid.
check_key_regeneration() {
  local out status account old_key new_key t0 regen_ms revoke_ms codes
  # status of a counted request with key $1 (the extraction is cached by check_extract)
  call() {
    curl -s --max-time 30 -o /dev/null -w '%{http_code}' -X POST "http://$GATEWAY_IP:8080/api/v1/extract" \
      -H 'content-type: application/json' -H "X-API-Key: $1" \
      --data "{\"url\":\"https://www.youtube.com/watch?v=$YT_MANUAL_AUTO\"}"
  }
  # "20 401", or e.g. "3 200 17 401": how many of 20 requests got each status
  calls() { local i; for i in $(seq 1 20); do call "$1"; echo; done | sort | uniq -c | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }
  out=$(admin POST /admin/v1/accounts '{"tier":"pro"}')
  account=$(printf '%s' "$out" | head -n -1 | json r.account_id 2>/dev/null || true)
  old_key=$(printf '%s' "$out" | head -n -1 | json r.api_key 2>/dev/null || true)
  [ -n "$account" ] && [ -n "$old_key" ] || { fail "key regeneration: account not created: $(printf '%s' "$out" | head -c 300)"; return; }
  codes=$(calls "$old_key")
  [ "$codes" = "20 200" ] || { fail "key regeneration: the new key before any change: $codes"; return; }
  t0=$(date +%s%N)
  out=$(admin POST "/admin/v1/accounts/$account/api-key")
  regen_ms=$((($(date +%s%N) - t0) / 1000000))
  status=$(printf '%s' "$out" | tail -1)
  new_key=$(printf '%s' "$out" | head -n -1 | json r.api_key 2>/dev/null || true)
  [ "$status" = 201 ] && [ -n "$new_key" ] || { fail "key regeneration: POST api-key -> $status"; return; }
  local old_after new_after
  old_after=$(calls "$old_key")
  new_after=$(calls "$new_key")
  t0=$(date +%s%N)
  status=$(admin DELETE "/admin/v1/accounts/$account/api-key" | tail -1)
  revoke_ms=$((($(date +%s%N) - t0) / 1000000))
  local revoked_after
  revoked_after=$(calls "$new_key")
  local evidence="regenerate answered in $regen_ms ms, then the old key: $old_after, the new key: $new_after; revoke ($status) in $revoke_ms ms, then the new key: $revoked_after"
  if [ "$old_after" = "20 401" ] && [ "$new_after" = "20 200" ] && [ "$status" = 204 ] &&
    [ "$revoked_after" = "20 401" ] && [ "$regen_ms" -lt 1900 ] && [ "$revoke_ms" -lt 1900 ]; then
    pass "key regeneration and revocation hold on both gateway replicas at once: $evidence"
  else
    fail "key regeneration and revocation: $evidence"
  fi
}

# A batch fans out over Kafka (extract.jobs.v1) to the extractors. One extractor pod is killed
# (no grace) first: its partitions stay assigned to a dead member until the group rebalances, so
# the jobs sent there are redone by the other replica or the replacement.
check_extractor_deletion() {
  local victim out urls="" id ok after
  victim=$(component_pods extractor | head -1)
  [ -n "$victim" ] || { fail "extractor deletion: no extractor pod"; return; }
  for id in "${YT_BATCH[@]}"; do urls+="\"https://www.youtube.com/watch?v=$id\","; done
  k delete pod "$victim" --grace-period=0 --force >/dev/null 2>&1
  local t0=$SECONDS
  out=$(gw POST /api/v1/batch "{\"urls\":[${urls%,}]}")
  local took=$((SECONDS - t0))
  ok=$(printf '%s' "$out" | head -n -1 | json 'r.results.filter(x => x.success).length' 2>/dev/null || echo 0)
  k rollout status deploy/"$RELEASE-extractor" --timeout=180s >/dev/null 2>&1 || true
  after=$(component_pods extractor | tr '\n' ' ')
  if [ "$(printf '%s' "$out" | tail -1)" = 200 ] && [ "$ok" = "${#YT_BATCH[@]}" ] && ! grep -qw "$victim" <<<"$after" &&
    [ "$(k get deploy "$RELEASE-extractor" -o jsonpath='{.status.availableReplicas}')" = 2 ]; then
    pass "extractor pod $victim killed: batch of ${#YT_BATCH[@]} over Kafka all successful in ${took} s, pod replaced ($after)"
  else
    fail "extractor deletion: batch $(printf '%s' "$out" | head -c 400); pods now: $after"
  fi
}

# jobs_metric POD NAME : the sum of the samples of metric NAME (label matchers allowed: NAME{a="b"})
# on the pod's /metrics, read from the node through the pod's address; empty when it does not answer.
jobs_metric() {
  local ip
  ip=$(k get pod "$1" -o jsonpath='{.status.podIP}' 2>/dev/null) && [ -n "$ip" ] || return 0
  curl -s --max-time 5 "http://$ip:9464/metrics" | METRIC=$2 node -e '
    const [name, labels = ""] = process.env.METRIC.split("{");
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      if (!s.includes("# TYPE")) return;
      const want = labels.replace(/}$/, "").split(",").filter(Boolean);
      let sum = 0;
      for (const line of s.split("\n")) {
        const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
        if (m && m[1] === name && want.every((l) => (m[2] || "").split(",").includes(l))) sum += Number(m[3]);
      }
      console.log(sum);
    });'
}

# Two job-service replicas run the jobs. A job of the recorded platform's JOB_VIDEOS videos (each
# answered late, test/cluster/engines.yaml) is under way when the pod that holds it (the one whose
# subx_jobs_running is 1) is deleted: it finishes its window, gives the lease back, and the other
# replica completes the job. No item lost or doubled: every item succeeded once, the job charged
# one credit per item, the account's balance dropped by exactly that, and the replica that
# finished it is not the deleted one. An account of its own, so the suite's balance stays apart.
check_job_service_deletion() {
  local n out account key before urls="" i id job_id job status succeeded holder="" pod at_delete completed_by balance
  n=$(k get deploy youtube -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="JOB_VIDEOS")].value}')
  [ "${n:-0}" -gt 0 ] || { fail "job service deletion: the recorded platform serves no job videos (JOB_VIDEOS)"; return; }
  out=$(admin POST /admin/v1/accounts '{"tier":"pro","credits":1000}')
  account=$(printf '%s' "$out" | head -n -1 | json r.account_id 2>/dev/null || true)
  key=$(printf '%s' "$out" | head -n -1 | json r.api_key 2>/dev/null || true)
  [ -n "$account" ] && [ -n "$key" ] || { fail "job service deletion: account not created: $(printf '%s' "$out" | head -c 300)"; return; }
  before=$(admin GET "/admin/v1/accounts/$account" | head -n -1 | json r.credits)
  for i in $(seq 0 $((n - 1))); do
    printf -v id 'cjob%07d' "$i"
    urls+="\"https://www.youtube.com/watch?v=$id\","
  done
  out=$(API_KEY=$key gw POST /api/v1/jobs "{\"source\":{\"type\":\"urls\",\"urls\":[${urls%,}]}}")
  job_id=$(printf '%s' "$out" | head -n -1 | json r.job_id 2>/dev/null || true)
  [ "$(printf '%s' "$out" | tail -1)" = 202 ] && [ -n "$job_id" ] ||
    { fail "job service deletion: POST /api/v1/jobs: $(printf '%s' "$out" | head -c 300)"; return; }
  # Under way (a window done) and held by one replica.
  local deadline=$((SECONDS + 120))
  while [ -z "$holder" ] && [ $SECONDS -lt $deadline ]; do
    succeeded=$(API_KEY=$key gw GET "/api/v1/jobs/$job_id" | head -n -1 | json 'r.progress ? r.progress.succeeded : 0' 2>/dev/null || echo 0)
    if [ "${succeeded:-0}" -gt 0 ]; then
      for pod in $(component_pods jobs); do
        [ "$(jobs_metric "$pod" subx_jobs_running)" = 1 ] && holder=$pod
      done
    fi
    [ -n "$holder" ] || sleep 0.5
  done
  [ -n "$holder" ] || { fail "job service deletion: job $job_id not under way on a job-service pod within 120 s (succeeded: ${succeeded:-?})"; return; }
  at_delete=$succeeded
  k delete pod "$holder" --wait=false >/dev/null 2>&1
  deadline=$((SECONDS + 300))
  while [ $SECONDS -lt $deadline ]; do
    # 503 while the gateway's channel moves off the stopping pod: asked again
    job=$(API_KEY=$key gw GET "/api/v1/jobs/$job_id" | head -n -1)
    status=$(printf '%s' "$job" | json r.status 2>/dev/null || true)
    case $status in completed | failed | canceled) break ;; esac
    sleep 1
  done
  k rollout status deploy/"$RELEASE-jobs" --timeout=180s >/dev/null 2>&1 || true
  completed_by=""
  for pod in $(component_pods jobs); do
    [ "$pod" != "$holder" ] && [ "$(jobs_metric "$pod" 'subx_jobs_finished_total{status="completed"}')" = 1 ] && completed_by=$pod
  done
  # The balance settles with the last round's commit.
  deadline=$((SECONDS + 60))
  while balance=$(admin GET "/admin/v1/accounts/$account" | head -n -1 | json r.credits 2>/dev/null) &&
    [ "$balance" != $((before - n)) ] && [ $SECONDS -lt $deadline ]; do sleep 1; done
  local evidence
  evidence="job $job_id of $n videos: $(printf '%s' "$job" | json '`${r.status}, progress ${JSON.stringify(r.progress)}, credits_charged ${r.credits_charged}`' 2>/dev/null || printf '%s' "$job" | head -c 200); pod $holder deleted at $at_delete succeeded, completed by ${completed_by:-no other replica}; balance $before -> $balance"
  if [ "$status" = completed ] && [ "$at_delete" -lt "$n" ] && [ -n "$completed_by" ] &&
    [ "$(printf '%s' "$job" | json '[r.progress.total, r.progress.succeeded, r.progress.failed, r.credits_charged].join(" ")')" = "$n $n 0 $n" ] &&
    [ "$balance" = $((before - n)) ]; then
    pass "job-service pod deleted mid-job, the other replica completed it, nothing lost or doubled: $evidence"
  else
    fail "job service deletion: $evidence"
  fi
}

# A client that loops through the gateway's cluster IP (load_start NAME ... load_stop): extracts
# with the suite's key, one at a time, each bounded, at most ROLL_MAX_REQUESTS or ROLL_TIMEOUT s.
# load_stop sets LOAD_TOTAL and LOAD_FAILED and keeps the codes in $SUITE_TMP/NAME.codes: the
# status of each request, and for a failed one its error code and time ("503 SERVICE_UNAVAILABLE
# 09:56:40"), so a failure says what failed.
load_start() {
  LOAD_NAME=$1
  local stop=$SUITE_TMP/$1.stop results=$SUITE_TMP/$1.codes body=$SUITE_TMP/$1.body
  rm -f "$stop"
  : >"$results"
  (
    local n=0 deadline=$((SECONDS + ROLL_TIMEOUT)) code
    while [ ! -f "$stop" ] && [ $n -lt "$ROLL_MAX_REQUESTS" ] && [ $SECONDS -lt $deadline ]; do
      : >"$body"
      code=$(curl -s --max-time 10 -o "$body" -w '%{http_code}' -X POST "http://$GATEWAY_IP:8080/api/v1/extract" \
        -H "X-API-Key: $API_KEY" -H 'content-type: application/json' \
        --data "{\"url\":\"https://www.youtube.com/watch?v=$YT_MANUAL_AUTO\"}") || code="curl-error:$code"
      if [ "$code" = 200 ]; then echo 200 >>"$results"; else
        echo "$code $(sed -n 's/.*"code":"\([A-Z_]*\)".*/\1/p' "$body" | head -1) $(date +%T)" >>"$results"
      fi
      n=$((n + 1))
    done
  ) &
  LOAD_PID=$!
}
load_stop() {
  touch "$SUITE_TMP/$LOAD_NAME.stop"
  wait "$LOAD_PID"
  local results=$SUITE_TMP/$LOAD_NAME.codes
  LOAD_TOTAL=$(wc -l <"$results")
  LOAD_FAILED=$(grep -vc '^200$' "$results" || true)
}
load_failures() { grep -v '^200$' "$SUITE_TMP/$1.codes" | cut -d' ' -f1-2 | sort | uniq -c | tr '\n' ' '; }

# A client loops through the gateway's cluster IP during `kubectl rollout restart`: no request may fail.
check_rolling_restart() {
  local before after total bad
  before=$(component_pods gateway | tr '\n' ' ')
  load_start roll
  sleep 2
  k rollout restart deploy/"$RELEASE-gateway" >/dev/null
  k rollout status deploy/"$RELEASE-gateway" --timeout="${ROLL_TIMEOUT}s" >/dev/null 2>&1 || true
  # the last old pod's preStop pause and shutdown
  sleep 8
  load_stop
  total=$LOAD_TOTAL bad=$LOAD_FAILED
  after=$(component_pods gateway | tr '\n' ' ')
  if [ "$bad" = 0 ] && [ "$total" -ge 20 ] && [ "$before" != "$after" ]; then
    pass "rolling restart of the gateway ($before-> $after): $total requests through the cluster IP, none failed"
  else
    fail "rolling restart: $bad of $total requests failed ($(load_failures roll)); pods $before-> $after"
  fi
}

# release_digests VERSION : "<image> <digest>" per image scripts/release.sh pushed for VERSION.
release_digests() { grep -v '^oci://' "$RUN_DIR/releases/$1/images.txt" | sed 's/ [^ ]*@/ /'; }

# Every subx pod runs VERSION's images, pulled from the release registry: each container's image
# is <registry>/subx/<component>:VERSION, and the digest the node resolved for it is the one
# scripts/release.sh pushed (an image imported into the node, or built there, would not have it).
check_release_images() {
  local version=$1 bad
  bad=$(k get pods -l "app.kubernetes.io/instance=$RELEASE" -o json | EXPECTED=$(release_digests "$version") node -e '
    const want = new Map(process.env.EXPECTED.trim().split("\n").map((l) => l.split(" ")));
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const bad = []; let n = 0;
      for (const p of JSON.parse(s).items) {
        if (p.metadata.deletionTimestamp || (p.metadata.annotations || {})["helm.sh/hook"]) continue;
        if (p.status.phase !== "Running") continue;
        for (const c of p.status.containerStatuses || []) {
          n++;
          const digest = want.get(c.image);
          if (!digest) bad.push(`${p.metadata.name}: image ${c.image} is not one of the release`);
          else if (!c.imageID.endsWith("@" + digest)) bad.push(`${p.metadata.name}: ${c.imageID} is not the pushed ${digest}`);
        }
      }
      if (n === 0) bad.push("no running subx container");
      console.log(bad.length ? bad.join("; ") : `ok ${n}`);
    });')
  if [[ $bad == ok* ]]; then
    pass "every subx pod (${bad#ok } containers) runs the images of release $version, pulled from $CLUSTER_REGISTRY with the pushed digests"
  else
    fail "images of release $version: $bad"
  fi
}

# `helm upgrade` from the previous release to the current one, both from the registry, while a
# client loops through the gateway's cluster IP: every Deployment rolls to new images, and no
# request may fail (docs/operations.md, "Upgrades").
check_upgrade() {
  local t0 took total bad history
  load_start upgrade
  sleep 2
  t0=$SECONDS
  # shellcheck disable=SC2046 # chart_args: one word per flag
  "$HELM" upgrade "$RELEASE" "$(chart_ref)" $(chart_args "$RELEASE_VERSION") --wait --timeout 10m \
    >"$SUITE_TMP/upgrade.log" 2>&1
  local rc=$?
  took=$((SECONDS - t0))
  # the last old pods' preStop pause and shutdown
  sleep 8
  load_stop
  total=$LOAD_TOTAL bad=$LOAD_FAILED
  history=$("$HELM" history "$RELEASE" -n "$NAMESPACE" -o json | json 'r.map(x => x.chart + ":" + x.status).join(" -> ")')
  if [ "$rc" = 0 ] && [ "$bad" = 0 ] && [ "$total" -ge 20 ] &&
    [[ $history == *"subx-$PREVIOUS_VERSION:superseded -> subx-$RELEASE_VERSION:deployed" ]]; then
    pass "upgrade $PREVIOUS_VERSION -> $RELEASE_VERSION from oci://$CLUSTER_REGISTRY in $took s ($history): $total requests through the cluster IP, none failed"
  else
    fail "upgrade $PREVIOUS_VERSION -> $RELEASE_VERSION (helm exit $rc, $took s; $history): $bad of $total requests failed ($(load_failures upgrade); first: $(grep -v '^200$' "$SUITE_TMP/upgrade.codes" | head -1), last: $(grep -v '^200$' "$SUITE_TMP/upgrade.codes" | tail -1)); helm: $(grep -i error "$SUITE_TMP/upgrade.log" | tail -3 | tr '\n' ' ')"
  fi
}

run_cluster_suite() {
  # every check reports and the suite goes on; the verdict is the count at the end
  set +e
  mkdir -p "$SUITE_TMP"
  local t0=$SECONDS
  GATEWAY_IP=$(k get svc "$RELEASE-gateway" -o jsonpath='{.spec.clusterIP}')
  ADMIN_IP=$(k get svc "$RELEASE-gateway-admin" -o jsonpath='{.spec.clusterIP}')
  echo "== cluster suite: release $RELEASE in namespace $NAMESPACE, gateway at $GATEWAY_IP:8080"
  check_deployments
  check_release_images "$PREVIOUS_VERSION"
  check_probes
  check_dns
  check_in_cluster_health
  check_crds
  # As an SRE runs it right after `up`: no key Secret yet, so the keyed checks say they are skipped.
  check_helm_test_plain
  if create_key; then
    # the helm test hook reads its key from this Secret (ci/cluster-values.yaml tests.smoke)
    k create secret generic subx-cluster-smoke-key --from-literal=API_KEY="$API_KEY" \
      --dry-run=client -o yaml | k apply -f - >/dev/null
    check_extractor_deletion
    check_extract
    check_key_regeneration
    check_job_service_deletion
    check_helm_test
    check_rolling_restart
    check_upgrade
    check_release_images "$RELEASE_VERSION"
    check_probes
  fi
  echo "== cluster suite: $((SECONDS - t0)) s"
  echo "cluster: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}
