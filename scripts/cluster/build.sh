#!/usr/bin/env bash
# Builds the single-node cluster's components from the Go module proxy into $CLUSTER_CACHE/bin,
# once per version (a stamp file records what each binary was built from):
#   kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet, kubectl
#     from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3, coredns from
#     github.com/coredns/coredns.
# `go install mod@version` refuses these modules: their go.mod `replace` local directories
# (kubernetes' staging/, etcd's sibling modules) that a module zip does not carry. So the module is
# copied out of the module cache, its local replaces are dropped and the replaced modules are
# required at their published versions (staging k8s.io/* v0.X.Y, go.etcd.io/etcd/* v3.X.Y).
# Sourced by scripts/cluster.sh (needs CLUSTER_CACHE and the *_VERSION variables).

# Every build runs at low priority: the machine is shared with test suites.
BUILD_NICE=${CLUSTER_BUILD_NICE:-15}

go_bin() {
  if command -v go >/dev/null; then command -v go
  elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
  else die "Go is needed to build the cluster components (https://go.dev/doc/install)"; fi
}

# prepare_module MODULE VERSION PIN -> prints the writable source directory.
# PIN: version required for every module the original go.mod replaced with a local directory.
prepare_module() {
  local module=$1 version=$2 pin=$3 go dir src
  go=$(go_bin)
  src=$CLUSTER_CACHE/src/$(echo "$module" | tr / _)@$version
  if [ ! -f "$src/.prepared" ]; then
    dir=$(GOWORK=off GOFLAGS=-mod=mod "$go" mod download -json "$module@$version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') ||
      die "go mod download $module@$version failed"
    rm -rf "$src" && mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src" && chmod -R u+w "$src"
    (
      cd "$src"
      export GOWORK=off
      local edits
      # local replaces: drop them; re-require the replaced modules that are actually required
      edits=$("$go" mod edit -json | python3 -c '
import json, sys
mod = json.load(sys.stdin)
required = {r["Path"] for r in mod.get("Require") or []}
pin = sys.argv[1]
for r in mod.get("Replace") or []:
    new = r["New"]["Path"]
    if new.startswith("./") or new.startswith("../"):
        print("-dropreplace=" + r["Old"]["Path"])
        if r["Old"]["Path"] in required:
            print("-require=" + r["Old"]["Path"] + "@" + pin)
' "$pin")
      # shellcheck disable=SC2086 # one flag per line
      [ -z "$edits" ] || "$go" mod edit $edits
    )
    touch "$src/.prepared"
  fi
  echo "$src"
}

stamp_ok() { [ -x "$CLUSTER_CACHE/bin/$1" ] && [ "$(cat "$CLUSTER_CACHE/bin/.$1.stamp" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" >"$CLUSTER_CACHE/bin/.$1.stamp"; }

build_kubernetes() {
  local stampv="kubernetes v$KUBE_VERSION" missing=() b
  for b in kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl; do
    stamp_ok "$b" "$stampv" || missing+=("$b")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  local src go t0=$SECONDS
  go=$(go_bin)
  log "building ${missing[*]} from k8s.io/kubernetes v$KUBE_VERSION (cold: about 20 minutes on 2 cores)"
  src=$(prepare_module k8s.io/kubernetes "v$KUBE_VERSION" "v0.${KUBE_VERSION#1.}")
  # The version a release build stamps in: helm checks the chart's kubeVersion against it, and
  # an unstamped build reports v0.0.0-master.
  local v ldflags="-s -w"
  local major=${KUBE_VERSION%%.*} minor=${KUBE_VERSION#*.}
  minor=${minor%%.*}
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $v.gitVersion=v$KUBE_VERSION -X $v.gitMajor=$major -X $v.gitMinor=$minor"
    ldflags+=" -X $v.gitTreeState=clean -X $v.buildDate=1970-01-01T00:00:00Z"
  done
  local pkgs=()
  for b in "${missing[@]}"; do pkgs+=("./cmd/$b"); done
  (cd "$src" && GOWORK=off GOFLAGS=-mod=mod nice -n "$BUILD_NICE" "$go" build -trimpath -ldflags="$ldflags" \
    -o "$CLUSTER_CACHE/bin/" "${pkgs[@]}") || die "building kubernetes failed"
  for b in "${missing[@]}"; do stamp "$b" "$stampv"; done
  log "built ${missing[*]} in $((SECONDS - t0)) s"
}

build_etcd() {
  stamp_ok etcd "etcd v$ETCD_VERSION" && return 0
  local src go t0=$SECONDS
  go=$(go_bin)
  log "building etcd v$ETCD_VERSION from go.etcd.io/etcd/server/v3"
  src=$(prepare_module go.etcd.io/etcd/server/v3 "v$ETCD_VERSION" "v$ETCD_VERSION")
  (cd "$src" && GOWORK=off GOFLAGS=-mod=mod nice -n "$BUILD_NICE" "$go" build -trimpath -ldflags="-s -w" \
    -o "$CLUSTER_CACHE/bin/etcd" .) || die "building etcd failed"
  stamp etcd "etcd v$ETCD_VERSION"
  log "built etcd in $((SECONDS - t0)) s"
}

# The CoreDNS plugins the node's Corefile uses (scripts/cluster/node.sh). CoreDNS compiles in what
# plugin.cfg lists; its default list pulls in the cloud SDKs (route53, azure, clouddns, ...), which
# took most of its 8-minute build here.
COREDNS_PLUGINS=(bind errors health ready cache kubernetes)

build_coredns() {
  local stampv="coredns v$COREDNS_VERSION plugins ${COREDNS_PLUGINS[*]}"
  stamp_ok coredns "$stampv" && return 0
  local src go t0=$SECONDS
  go=$(go_bin)
  log "building coredns v$COREDNS_VERSION from github.com/coredns/coredns (plugins: ${COREDNS_PLUGINS[*]})"
  src=$(prepare_module github.com/coredns/coredns "v$COREDNS_VERSION" "v$COREDNS_VERSION")
  (
    cd "$src"
    # keep plugin.cfg's order (it is the order of execution), drop the plugins not listed
    [ -f plugin.cfg.orig ] || cp plugin.cfg plugin.cfg.orig
    local keep
    keep=$(printf '%s|' "${COREDNS_PLUGINS[@]}")
    grep -E "^(#|$|(${keep%|}):)" plugin.cfg.orig >plugin.cfg
    # regenerates core/plugin/zplugin.go and core/dnsserver/zdirectives.go from plugin.cfg
    GOWORK=off GOFLAGS=-mod=mod nice -n "$BUILD_NICE" "$go" run directives_generate.go
    GOWORK=off GOFLAGS=-mod=mod nice -n "$BUILD_NICE" "$go" build -trimpath -ldflags="-s -w" -o "$CLUSTER_CACHE/bin/coredns" .
  ) || die "building coredns failed"
  stamp coredns "$stampv"
  log "built coredns in $((SECONDS - t0)) s"
}

build_all() {
  mkdir -p "$CLUSTER_CACHE/bin"
  build_etcd
  build_coredns
  build_kubernetes
}
