#!/usr/bin/env bash
# Validates the deployment files without a container runtime or a cluster (CI has neither):
#   1. docker-compose.yml: parsed and schema-checked by a real Compose implementation
#      (Debian's docker-compose 1.29), with .env.example and with the built-in defaults (profile
#      semantics, which 1.29's `config` ignores, are checked in test/deploy/compose-file.test.ts);
#   2. deploy/helm/subx: `helm lint --strict` and `helm template` for every deploy/helm/subx/ci/*.yaml,
#      rendered into $VALIDATE_DEPLOY_OUT (default: a temp dir), plus renders that must fail
#      (no ADMIN_TOKEN; a KEDA maxReplicaCount above the jobs topics' partitions); the KEDA example
#      (ci/keda-values.yaml) must hold the ScaledObjects of the extractor, jobs and speech;
#   3. the same chart rendered with its default values and every ci/*.yaml, validated strictly
#      (unknown fields rejected) by kubeconform against the API schemas of Kubernetes releases and
#      the Prometheus-operator and KEDA CRDs (scripts/kube-schemas/kube-validate.sh);
#   4. Prometheus rules and config: `promtool check rules` on the rule file and on the groups of the
#      PrometheusRule the chart renders, `promtool test rules` (deploy/prometheus/tests/) on the
#      rendered groups, `promtool check config` on the compose Prometheus configuration;
#   5. shell syntax of the scripts the stack runs.
# Tools it installs when missing: helm, promtool and kubeconform (pinned, `go install`, cached in
# $SUBX_TOOLS_DIR/bin), the API schemas (`go mod download`, converted and cached in
# $SUBX_TOOLS_DIR/kube-schemas) and docker-compose (apt). Timings per step are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
# Prometheus 3.16.0: its Go module versions are v0.<major*100+minor>.<patch>.
PROMTOOL_VERSION=3.16.0
PROMTOOL_MODULE_VERSION=v0.316.0
# Kubernetes version the chart is linted and rendered for (Capabilities.KubeVersion).
KUBE_VERSION=1.33.0
TOOLS_DIR=${SUBX_TOOLS_DIR:-$HOME/.cache/subx-tools}
BIN_DIR=$TOOLS_DIR/bin
CHART=deploy/helm/subx
OUT_DIR=${VALIDATE_DEPLOY_OUT:-$(mktemp -d -t subx-deploy.XXXXXX)}
mkdir -p "$OUT_DIR" "$BIN_DIR"

timings=()
step_start=0
step() {
  echo "== validate-deploy: $1"
  step_start=$(date +%s%N)
  step_name=$1
}
step_end() {
  local ms=$((($(date +%s%N) - step_start) / 1000000))
  timings+=("$(printf '%7d ms  %s' "$ms" "$step_name")")
}
fail() {
  echo "validate-deploy: FAIL: $*" >&2
  exit 1
}

# --- tools -------------------------------------------------------------------------------------
step "helm $HELM_VERSION"
HELM=$BIN_DIR/helm
if [ ! -x "$HELM" ] || [ "$("$HELM" version --template '{{.Version}}' 2>/dev/null)" != "$HELM_VERSION" ]; then
  if ! command -v go >/dev/null; then
    # where the official Go tarball installs (also what scripts/engines.sh looks for)
    [ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin ||
      fail "helm $HELM_VERSION is missing, and so is Go >= 1.26 to build it: install Go (https://go.dev/doc/install) and re-run, or copy a helm $HELM_VERSION binary to $HELM"
  fi
  echo "installing helm $HELM_VERSION into $BIN_DIR (go install; a few minutes on a cold Go cache)"
  # The -X flags are what helm's Makefile sets for a release build: without them `go install` yields
  # a helm that reports version "v3.22" and assumes Kubernetes v1.20 (client-go v0.37 -> 1.37).
  # -s -w: no symbol tables, shorter link step.
  v=helm.sh/helm/v3
  ldflags="-s -w -X $v/internal/version.version=$HELM_VERSION -X $v/internal/version.gitTreeState=clean"
  ldflags+=" -X $v/pkg/lint/rules.k8sVersionMajor=1 -X $v/pkg/lint/rules.k8sVersionMinor=37"
  ldflags+=" -X $v/pkg/chartutil.k8sVersionMajor=1 -X $v/pkg/chartutil.k8sVersionMinor=37"
  GOBIN=$BIN_DIR GOFLAGS="${GOFLAGS:-} -trimpath" go install -ldflags="$ldflags" "$v/cmd/helm@$HELM_VERSION"
fi
"$HELM" version --short
step_end

step "promtool $PROMTOOL_VERSION"
PROMTOOL=$BIN_DIR/promtool
if [ ! -x "$PROMTOOL" ] || ! "$PROMTOOL" --version 2>/dev/null | grep -q "version $PROMTOOL_VERSION "; then
  command -v go >/dev/null || fail "promtool is missing and so is Go (needed to build promtool $PROMTOOL_VERSION)"
  echo "installing promtool $PROMTOOL_VERSION into $BIN_DIR (go install; several minutes on a cold Go cache)"
  # remove_all_sd: leaves out the service-discovery plugins, which promtool's rule and metric
  # checks never use and one of which (nomad) the Go module proxy does not serve.
  GOBIN=$BIN_DIR GOFLAGS="${GOFLAGS:-} -trimpath" go install -tags remove_all_sd \
    -ldflags="-s -w -X github.com/prometheus/common/version.Version=$PROMTOOL_VERSION" \
    "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_MODULE_VERSION"
fi
"$PROMTOOL" --version | head -1
step_end

step "kubeconform"
bash scripts/kube-schemas/kube-validate.sh tool
step_end

step "kube API schemas"
bash scripts/kube-schemas/kube-validate.sh schemas
step_end

step "docker-compose"
if command -v docker-compose >/dev/null; then
  COMPOSE=(docker-compose)
else
  echo "installing Debian's docker-compose (apt)"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends docker-compose >/dev/null; then
    "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300 update -qq
    "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends docker-compose >/dev/null
  fi
  COMPOSE=(docker-compose)
fi
"${COMPOSE[@]}" version --short
step_end

# --- docker-compose.yml --------------------------------------------------------------------------
step "compose config"
# Never let a developer's own .env (or COMPOSE_* in the environment) change what is validated.
unset COMPOSE_PROFILES COMPOSE_FILE COMPOSE_PROJECT_NAME
compose() { "${COMPOSE[@]}" --project-directory . -f docker-compose.yml "$@"; }
empty_env=$OUT_DIR/empty.env
: >"$empty_env"

# The secrets have no default (compose refuses to start without them): .env.example leaves them
# empty, `bash scripts/containers.sh env` fills them in. Validated as a user runs it: with them set.
secrets_env=$OUT_DIR/secrets.env
printf 'ADMIN_TOKEN=validate-admin-token-0123456789abcdef\nAPI_KEY_PEPPER=validate-pepper-0123456789abcdef0123456789\nGRAFANA_ADMIN_PASSWORD=validate-grafana\n' >"$secrets_env"
example_env=$OUT_DIR/example.env
grep -v -E '^(ADMIN_TOKEN|API_KEY_PEPPER|GRAFANA_ADMIN_PASSWORD)=' .env.example | cat - "$secrets_env" >"$example_env"
compose --env-file "$example_env" config -q || fail "docker-compose.yml is invalid with .env.example (+ secrets)"
compose --env-file "$secrets_env" --profile apps config -q || fail "docker-compose.yml is invalid with built-in defaults (+ secrets)"
if compose --env-file "$empty_env" --profile apps config -q 2>"$OUT_DIR/compose-no-secrets.err"; then
  fail "docker-compose.yml was accepted without ADMIN_TOKEN; the secrets must have no default"
fi
grep -q 'ADMIN_TOKEN' "$OUT_DIR/compose-no-secrets.err" || { cat "$OUT_DIR/compose-no-secrets.err" >&2; fail "unexpected error without secrets"; }
compose --env-file "$example_env" config >"$OUT_DIR/compose.resolved.yaml"

step_end

# --- Helm chart --------------------------------------------------------------------------------
step "helm lint + template"
shopt -s nullglob
examples=("$CHART"/ci/*.yaml)
[ ${#examples[@]} -gt 0 ] || fail "no example values in $CHART/ci"
for values in "${examples[@]}"; do
  name=$(basename "$values" .yaml)
  "$HELM" lint --strict "$CHART" -f "$values" --namespace subx --kube-version "$KUBE_VERSION" >"$OUT_DIR/$name.lint.txt" 2>&1 ||
    { cat "$OUT_DIR/$name.lint.txt" >&2; fail "helm lint $values"; }
  "$HELM" template subx "$CHART" -f "$values" --namespace subx --kube-version "$KUBE_VERSION" >"$OUT_DIR/$name.yaml" ||
    fail "helm template $values"
  echo "rendered $values -> $OUT_DIR/$name.yaml ($(grep -c '^kind:' "$OUT_DIR/$name.yaml") objects)"
done
# The chart must refuse to render without the gateway's required secrets.
if "$HELM" template subx "$CHART" --namespace subx --kube-version "$KUBE_VERSION" >/dev/null 2>"$OUT_DIR/no-secrets.err"; then
  fail "helm template without ADMIN_TOKEN/existingSecret rendered; it must fail"
fi
grep -q 'ADMIN_TOKEN is required' "$OUT_DIR/no-secrets.err" || { cat "$OUT_DIR/no-secrets.err" >&2; fail "unexpected error without secrets"; }
# Queue-depth autoscaling: the KEDA example scales the three queue consumers, the speech engine
# down to zero, and none of them also has a CPU HPA.
keda_render=$OUT_DIR/keda-values.yaml
scaled=$(awk '/^kind: ScaledObject$/ { so = 1 } so && /^  name: / { print $2; so = 0 }' "$keda_render" | sort | tr '\n' ' ')
[ "$scaled" = "subx-extractor subx-jobs subx-speech " ] || fail "ci/keda-values.yaml: ScaledObjects '$scaled', want extractor, jobs and speech"
grep -q '^  minReplicaCount: 0$' "$keda_render" || fail "ci/keda-values.yaml: no ScaledObject scales to zero (the speech engine should)"
hpas=$(awk '/^kind: HorizontalPodAutoscaler$/ { h = 1 } h && /^  name: / { print $2; h = 0 }' "$keda_render" | tr '\n' ' ')
[ "$hpas" = "subx-gateway " ] || fail "ci/keda-values.yaml: CPU HPAs '$hpas' beside the ScaledObjects, want the gateway's only"
# KEDA never runs more consumers than partitions: the chart refuses a maximum above them.
if "$HELM" template subx "$CHART" -f "$CHART/ci/keda-values.yaml" --set components.extractor.keda.maxReplicaCount=65 \
  --namespace subx --kube-version "$KUBE_VERSION" >/dev/null 2>"$OUT_DIR/keda-partitions.err"; then
  fail "helm template with a KEDA maxReplicaCount above the jobs topics' partitions rendered; it must fail"
fi
grep -q 'maxReplicaCount (65) is above the 64 partitions of extract.jobs.v1' "$OUT_DIR/keda-partitions.err" ||
  { cat "$OUT_DIR/keda-partitions.err" >&2; fail "unexpected error for a maxReplicaCount above the partitions"; }
step_end

# --- Kubernetes API schemas ----------------------------------------------------------------------
step "kubeconform -strict"
HELM=$HELM bash scripts/kube-schemas/kube-validate.sh chart "$CHART" "$OUT_DIR" || fail "strict schema validation of $CHART"
step_end

# --- Prometheus rules and config ------------------------------------------------------------------
step "promtool rules + config"
RULES=$CHART/files/prometheus-rules.yaml
"$PROMTOOL" check rules "$RULES" || fail "promtool check rules $RULES"
# The rendered PrometheusRule's spec is a rules file once its two-space indent is removed.
rendered_rules() {
  "$HELM" template subx "$CHART" "$@" --namespace subx --kube-version "$KUBE_VERSION" \
    --show-only templates/prometheusrule.yaml | awk 'body { print substr($0, 3) } /^spec:$/ { body = 1 }'
}
rules_dir=$OUT_DIR/promtool
mkdir -p "$rules_dir"
# Default runbook base: the unit tests assert the runbook URLs too.
rendered_rules -f "$CHART/ci/dev-values.yaml" --set metrics.prometheusRule.enabled=true >"$rules_dir/subx.rules.yaml"
"$PROMTOOL" check rules "$rules_dir/subx.rules.yaml" || fail "promtool check rules (rendered PrometheusRule)"
cp deploy/prometheus/tests/*.test.yaml "$rules_dir/"
"$PROMTOOL" test rules "$rules_dir"/*.test.yaml || fail "promtool test rules"
# Production example: its own runbook base must reach every alert.
rendered_rules -f "$CHART/ci/production-values.yaml" >"$rules_dir/production.rules.yaml"
"$PROMTOOL" check rules "$rules_dir/production.rules.yaml" || fail "promtool check rules (production values)"
alerts=$(grep -c '^ *- alert:' "$rules_dir/production.rules.yaml")
rebased=$(grep -c 'runbook_url: https://docs.subx.example.com/operations#' "$rules_dir/production.rules.yaml")
[ "$alerts" -gt 0 ] && [ "$alerts" = "$rebased" ] || fail "runbook_url not rebased on every alert ($rebased of $alerts)"
# Every runbook anchor exists in docs/operations.md (as an explicit <a id> anchor).
for anchor in $(grep -o 'operations#[a-z0-9-]*' "$rules_dir/production.rules.yaml" | cut -d'#' -f2 | sort -u); do
  grep -q "id=\"$anchor\"" docs/operations.md || fail "docs/operations.md has no anchor $anchor"
done
"$PROMTOOL" check config --syntax-only deploy/prometheus/prometheus.yml || fail "promtool check config"
step_end

# --- scripts -----------------------------------------------------------------------------------
step "shell syntax"
for script in scripts/kafka-topics.sh scripts/validate-deploy.sh scripts/kube-schemas/kube-validate.sh; do
  bash -n "$script" || fail "syntax error in $script"
done
step_end

echo "== validate-deploy: OK (renders in $OUT_DIR)"
printf '%s\n' "${timings[@]}"
