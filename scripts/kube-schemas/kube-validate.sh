#!/usr/bin/env bash
# Strict, offline validation of the Helm chart's manifests against the API schemas of Kubernetes
# itself and of the Prometheus-operator and KEDA CRDs (deploy/README.md, "Validation in CI"):
#
#   kube-validate.sh tool                  build kubeconform (pinned, go install) into $SUBX_TOOLS_DIR/bin
#   kube-validate.sh schemas               fetch the API schemas (go mod download of k8s.io/kubernetes,
#                                          prometheus-operator and KEDA) and convert them (build-schemas.ts)
#   kube-validate.sh chart <chart> <out>   render <chart> with its default values and every ci/*.yaml,
#                                          for each Kubernetes version below, into <out>, and run
#                                          `kubeconform -strict` on the renders; exits 1 on any
#                                          unknown field, wrong type, or kind without a schema
#
# `chart` runs `tool` and `schemas` first when their results are not cached. helm comes from $HELM
# (scripts/validate-deploy.sh installs it into $SUBX_TOOLS_DIR/bin).
set -euo pipefail
cd "$(dirname "$0")/../.."

KUBECONFORM_VERSION=v0.8.0
# Kubernetes releases validated against: the newest release, and the oldest the chart declares
# (Chart.yaml kubeVersion), each the latest patch of its minor.
KUBE_SCHEMA_VERSIONS=(1.37.2 1.30.14)
PROMETHEUS_OPERATOR_VERSION=v0.85.0
# KEDA's CRDs (ScaledObject, TriggerAuthentication, ...): config/crd/bases of its Go module. v2.21's
# go.mod asks for Go >= 1.27.4, and `go mod download` refuses it under an older toolchain; v2.20's
# does not (Go 1.26 fetches it).
KEDA_VERSION=v2.20.2
TOOLS_DIR=${SUBX_TOOLS_DIR:-$HOME/.cache/subx-tools}
BIN_DIR=$TOOLS_DIR/bin
KUBECONFORM=$BIN_DIR/kubeconform
HELM=${HELM:-$BIN_DIR/helm}
NODE=node_modules/.bin/node
# The converted schemas depend on the versions and on the converter itself.
converter=scripts/kube-schemas/build-schemas.ts
schemas_key=$(printf '%s\n' "${KUBE_SCHEMA_VERSIONS[@]}" "$PROMETHEUS_OPERATOR_VERSION" "$KEDA_VERSION" | cat - "$converter" | sha256sum | cut -c1-16)
SCHEMAS_DIR=$TOOLS_DIR/kube-schemas/$schemas_key

fail() {
  echo "kube-validate: FAIL: $*" >&2
  exit 1
}

need_go() {
  command -v go >/dev/null && return
  [ -x /usr/local/go/bin/go ] && PATH=$PATH:/usr/local/go/bin && return
  fail "Go is missing (needed for $1): install Go (https://go.dev/doc/install) and re-run"
}

tool() {
  if [ -x "$KUBECONFORM" ] && [ "$("$KUBECONFORM" -v 2>/dev/null)" = "$KUBECONFORM_VERSION" ]; then
    echo "kubeconform $KUBECONFORM_VERSION (cached)"
    return
  fi
  need_go "kubeconform $KUBECONFORM_VERSION"
  echo "installing kubeconform $KUBECONFORM_VERSION into $BIN_DIR (go install)"
  mkdir -p "$BIN_DIR"
  GOBIN=$BIN_DIR GOFLAGS="${GOFLAGS:-} -trimpath" go install \
    -ldflags="-s -w -X main.version=$KUBECONFORM_VERSION" \
    "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION"
  "$KUBECONFORM" -v
}

# Directory of one module version in the Go module cache: `go mod download` fetches it from the
# Go module proxy and checks it against the checksum database (sum.golang.org).
module_dir() {
  local dir
  dir=$(go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -d "$dir" ] || fail "go mod download $1 gave no directory"
  echo "$dir"
}

schemas() {
  if [ -f "$SCHEMAS_DIR/.complete" ]; then
    echo "schemas: Kubernetes ${KUBE_SCHEMA_VERSIONS[*]}, prometheus-operator $PROMETHEUS_OPERATOR_VERSION, KEDA $KEDA_VERSION (cached in $SCHEMAS_DIR)"
    return
  fi
  need_go "the Kubernetes API schemas (go mod download)"
  [ -x "$NODE" ] || fail "$NODE is missing: run npm ci first"
  # Built aside and moved into place: a run in another worktree never sees half a directory.
  mkdir -p "$TOOLS_DIR/kube-schemas"
  building=$(mktemp -d "$TOOLS_DIR/kube-schemas/.building.XXXXXX")
  trap 'rm -rf "$building"' EXIT
  local operator keda crds=()
  operator=$(module_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION")
  for crd in "$operator"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml; do crds+=(--crd "$crd"); done
  [ ${#crds[@]} -gt 0 ] || fail "no CRDs in $operator/example/prometheus-operator-crd"
  keda=$(module_dir "github.com/kedacore/keda/v2@$KEDA_VERSION")
  local before=${#crds[@]}
  for crd in "$keda"/config/crd/bases/keda.sh_*.yaml; do crds+=(--crd "$crd"); done
  [ ${#crds[@]} -gt "$before" ] || fail "no CRDs in $keda/config/crd/bases"
  for version in "${KUBE_SCHEMA_VERSIONS[@]}"; do
    local kube
    kube=$(module_dir "k8s.io/kubernetes@v$version")
    "$NODE" "$converter" --kube-version "$version" --openapi "$kube/api/openapi-spec/v3" \
      "${crds[@]}" --out "$building"
  done
  touch "$building/.complete"
  # Another run may have finished first: its result is the same, keep it.
  mv -T "$building" "$SCHEMAS_DIR" 2>/dev/null || rm -rf "$building"
  [ -f "$SCHEMAS_DIR/.complete" ] || fail "could not put the schemas into $SCHEMAS_DIR"
}

chart() {
  local chart=$1 out=$2
  [ -d "$chart" ] || fail "no chart at $chart"
  [ -x "$HELM" ] || fail "helm not found at $HELM (scripts/validate-deploy.sh installs it)"
  [ -x "$KUBECONFORM" ] || tool
  [ -f "$SCHEMAS_DIR/.complete" ] || schemas
  # The oldest version validated must be the floor the chart declares, or the floor is untested.
  local floor oldest=${KUBE_SCHEMA_VERSIONS[-1]}
  floor=$(sed -n "s/^kubeVersion: *'>=\([0-9]*\.[0-9]*\)\..*/\1/p" "$chart/Chart.yaml")
  [ "$floor" = "${oldest%.*}" ] ||
    fail "$chart/Chart.yaml declares kubeVersion >=${floor:-?}, but the oldest release validated is $oldest: update KUBE_SCHEMA_VERSIONS"
  mkdir -p "$out"
  # Default values need only the secrets the chart refuses to render without (SMTP_URL: the dashboard's mail).
  local renders=("default|--set secrets.values.ADMIN_TOKEN=validate-admin-token-0123456789abcdef --set secrets.values.API_KEY_PEPPER=validate-pepper-0123456789abcdef0123 --set secrets.values.SMTP_URL=smtp://mail.invalid:587")
  for values in "$chart"/ci/*.yaml; do renders+=("$(basename "$values" .yaml)|-f $values"); done
  local status=0
  for version in "${KUBE_SCHEMA_VERSIONS[@]}"; do
    local files=()
    for render in "${renders[@]}"; do
      local name=${render%%|*} file
      file=$out/kube-$version-$name.yaml
      # shellcheck disable=SC2086 # the values arguments are meant to split
      "$HELM" template subx "$chart" --namespace subx --kube-version "$version" ${render#*|} >"$file" ||
        fail "helm template $name (Kubernetes $version)"
      files+=("$file")
    done
    echo "kubeconform -strict, Kubernetes $version + prometheus-operator $PROMETHEUS_OPERATOR_VERSION + KEDA $KEDA_VERSION:"
    # No -ignore-missing-schemas: a kind without a schema is an error, not a pass.
    "$KUBECONFORM" -strict -summary -output text -kubernetes-version "$version" \
      -schema-location "$SCHEMAS_DIR/kubernetes" \
      -schema-location "$SCHEMAS_DIR/crds/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json" \
      "${files[@]}" || status=1
  done
  [ $status = 0 ] || fail "manifests of $chart do not validate strictly (see above)"
}

case "${1:-}" in
  tool) tool ;;
  schemas) schemas ;;
  chart) [ $# = 3 ] || fail "usage: kube-validate.sh chart <chart-dir> <out-dir>"; chart "$2" "$3" ;;
  *) fail "usage: kube-validate.sh tool | schemas | chart <chart-dir> <out-dir>" ;;
esac
