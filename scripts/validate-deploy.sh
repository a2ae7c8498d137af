#!/usr/bin/env bash
# Validates the deployment files without a container runtime or a cluster (CI has neither):
#   1. docker-compose.yml: parsed and schema-checked by a real Compose implementation
#      (Debian's docker-compose 1.29), with .env.example and with the built-in defaults (profile
#      semantics, which 1.29's `config` ignores, are checked in test/deploy/compose-file.test.ts);
#   2. deploy/helm/subx: `helm lint --strict` and `helm template` for every deploy/helm/subx/ci/*.yaml,
#      rendered into $VALIDATE_DEPLOY_OUT (default: a temp dir), plus a render that must fail
#      (no ADMIN_TOKEN);
#   3. shell syntax of the scripts the stack runs.
# Tools it installs when missing: helm (pinned, `go install`, cached in $SUBX_TOOLS_DIR/bin) and
# docker-compose (apt). Timings per step are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
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

step "docker-compose"
if command -v docker-compose >/dev/null; then
  COMPOSE=(docker-compose)
else
  echo "installing Debian's docker-compose (apt)"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends docker-compose >/dev/null; then
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
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

compose --env-file .env.example config -q || fail "docker-compose.yml is invalid with .env.example"
compose --env-file "$empty_env" --profile apps config -q || fail "docker-compose.yml is invalid with built-in defaults"
compose --env-file .env.example config >"$OUT_DIR/compose.resolved.yaml"

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
step_end

# --- scripts -----------------------------------------------------------------------------------
step "shell syntax"
for script in scripts/kafka-topics.sh scripts/validate-deploy.sh; do
  bash -n "$script" || fail "syntax error in $script"
done
step_end

echo "== validate-deploy: OK (renders in $OUT_DIR)"
printf '%s\n' "${timings[@]}"
