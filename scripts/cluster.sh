#!/usr/bin/env bash
# scripts/cluster.sh — a real single-node Kubernetes on this machine, built from the Go module
# proxy and Debian's packages (kind and k3d need registry node images that cannot be pulled here).
#
#   bash scripts/cluster.sh build   # build (once, cached) etcd, Kubernetes, CoreDNS into ~/.cache/subx-cluster/bin
#   bash scripts/cluster.sh up      # build, start the cluster and the release registry, release the
#                                   # previous and the current version into it (scripts/release.sh),
#                                   # install the previous one from oci://; prints KUBECONFIG=<path>
#   bash scripts/cluster.sh start   # only the cluster (no images, no chart); prints KUBECONFIG=<path>
#   bash scripts/cluster.sh test    # up, then the cluster suite (scripts/cluster/test.sh), which ends
#                                   # with the upgrade to the current version under load; CI's step
#   bash scripts/cluster.sh down    # stop every process (the registry too), release mounts, remove
#                                   # interfaces and rules
#   bash scripts/cluster.sh env     # prints KUBECONFIG=<path> of the running cluster
#
# Needs root (interfaces, iptables, mounts) and Go. See deploy/README.md ("A real cluster").
# Progress goes to stderr; stdout carries only the KUBECONFIG line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

KUBE_VERSION=1.34.4
ETCD_VERSION=3.6.16
COREDNS_VERSION=1.14.7
# The CRDs of ServiceMonitor and PrometheusRule (monitoring.coreos.com/v1).
PROMETHEUS_OPERATOR_VERSION=v0.85.0
CLUSTER_CACHE=$(realpath -m "${SUBX_CLUSTER_CACHE:-${HOME:-/root}/.cache/subx-cluster}")
HELM=${HELM:-${SUBX_TOOLS_DIR:-${HOME:-/root}/.cache/subx-tools}/bin/helm}
NAMESPACE=${CLUSTER_NAMESPACE:-subx}
RELEASE=subx
CI_VALUES=deploy/helm/subx/ci/cluster-values.yaml
# The release registry (scripts/registry.sh) as the node's containerd and helm reach it.
CLUSTER_REGISTRY=${CLUSTER_REGISTRY:-localhost:5000}
# The chart's version is the release under test; the cluster first runs the previous one (the
# same tree released under this version), then upgrades (docs/operations.md, "Upgrades").
RELEASE_VERSION=$(sed -n 's/^version: *//p' deploy/helm/subx/Chart.yaml)
PREVIOUS_VERSION=${CLUSTER_PREVIOUS_VERSION:-$RELEASE_VERSION-rc.1}
ENGINES_MANIFEST=test/cluster/engines.yaml

SELF=cluster.sh
log() { printf '[%s %s] %s\n' "$SELF" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SELF" "$*" >&2; exit 1; }

# shellcheck source=cluster/build.sh
. scripts/cluster/build.sh
# shellcheck source=cluster/node.sh
. scripts/cluster/node.sh
# shellcheck source=cluster/images.sh
. scripts/cluster/images.sh

timings=()
timed() {
  local t0=$SECONDS
  "$@"
  timings+=("$(printf '%5d s  %s' $((SECONDS - t0)) "$*")")
}

ensure_helm() {
  [ -x "$HELM" ] && return 0
  log "helm is missing: scripts/validate-deploy.sh builds it into $(dirname "$HELM")"
  bash scripts/validate-deploy.sh >&2
}

cluster_start() {
  [ "$(id -u)" = 0 ] || die "the cluster needs root (interfaces, iptables, mounts)"
  if [ -f "$RUN_DIR/pids/kube-apiserver" ]; then
    alive kube-apiserver && alive kubelet && node_ready && { log "cluster already running"; return 0; }
    log "a stale cluster at $RUN_DIR: taking it down first"
    cluster_down
  fi
  mkdir -p "$RUN_DIR"
  net_up
  make_pki
  start_control_plane
  start_containerd
  import_node_images
  start_node
  log "cluster up: node $NODE_NAME Ready, apiserver https://$NODE_IP:$APISERVER_PORT (logs: $RUN_DIR/logs)"
}

cmd_up() {
  timed node_packages
  timed build_all
  timed ensure_helm
  timed cluster_start
  timed load_project_images
  timed publish_releases
  timed install_chart
  printf '%s\n' "${timings[@]}" >&2
  echo "KUBECONFIG=$KUBECONFIG_PATH"
}

case ${1:-} in
  build) node_packages && build_all ;;
  # The Go builds alone (no packages, no root): what .ci/run starts in the background early.
  binaries) build_all ;;
  up) cmd_up ;;
  start) cluster_start && echo "KUBECONFIG=$KUBECONFIG_PATH" ;;
  test)
    cmd_up >/dev/null
    export KUBECONFIG=$KUBECONFIG_PATH
    # shellcheck source=cluster/test.sh
    . scripts/cluster/test.sh
    run_cluster_suite
    ;;
  down)
    cluster_down
    REGISTRY_ADDR=127.0.0.1:${CLUSTER_REGISTRY##*:} bash scripts/registry.sh down
    ;;
  env) [ -f "$KUBECONFIG_PATH" ] || die "no cluster running"; echo "KUBECONFIG=$KUBECONFIG_PATH" ;;
  *) die "usage: $SELF build|up|start|test|down|env" ;;
esac
