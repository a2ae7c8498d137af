#!/usr/bin/env bash
# The single node: addresses, certificates, configuration files and the processes of the control
# plane and the node (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd,
# kubelet, kube-proxy, CoreDNS), and their teardown. Sourced by scripts/cluster.sh.
#
# Addresses (all on this machine, on interfaces this script creates and removes):
#   NODE_IP      on a port-less bridge of its own (no dummy interfaces in these kernels; the kubelet
#                refuses a loopback node address); the apiserver,
#                the kubelet and CoreDNS listen on it
#   POD_CIDR     the CNI bridge, one /24 for the one node; pods never get a route out of it (no
#                masquerading), so they reach nothing but the node and each other
#   SERVICE_CIDR cluster IPs, programmed by kube-proxy into this machine's iptables

NODE_NAME=subx-node
NODE_IF=subx-node0
NODE_IP=${CLUSTER_NODE_IP:-10.213.0.1}
POD_CIDR=${CLUSTER_POD_CIDR:-10.214.0.0/16}
NODE_POD_CIDR=${POD_CIDR%.*.*/*}.0.0/24
POD_GATEWAY=${POD_CIDR%.*.*/*}.0.1
POD_BRIDGE=subxbr0
SERVICE_CIDR=${CLUSTER_SERVICE_CIDR:-10.215.0.0/16}
API_SERVICE_IP=${SERVICE_CIDR%.*.*/*}.0.1
APISERVER_PORT=6443
ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
FWD_CHAIN=SUBX-CLUSTER-FWD
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
# Files and sockets of a running cluster; removed by `down`.
RUN_DIR=${SUBX_CLUSTER_DIR:-/tmp/subx-cluster}
PKI=$RUN_DIR/pki
CONTAINERD_SOCK=$RUN_DIR/containerd/containerd.sock
export KUBECONFIG_PATH=$RUN_DIR/kubeconfig
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
START_TIMEOUT=${CLUSTER_START_TIMEOUT:-180}

kubectl_() { "$CLUSTER_CACHE/bin/kubectl" --kubeconfig "$KUBECONFIG_PATH" "$@"; }

# wait_for SECONDS WHAT CMD... : polls CMD every second until it succeeds, or fails naming WHAT.
wait_for() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "$what: not ready within ${limit}s (logs: $RUN_DIR/logs)"
    sleep 1
  done
}

# --- packages the node needs from Debian --------------------------------------------------------
node_packages() {
  local missing=() p
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x "$CNI_BIN_DIR/bridge" ] || missing+=(containernetworking-plugins)
  command -v conntrack >/dev/null || missing+=(conntrack)
  command -v iptables >/dev/null || missing+=(iptables)
  [ -x /bin/busybox ] && file_is_static /bin/busybox || missing+=(busybox-static)
  command -v openssl >/dev/null || missing+=(openssl)
  [ ${#missing[@]} -gt 0 ] || return 0
  [ "$(id -u)" = 0 ] || die "the node needs ${missing[*]} (Debian packages) and root to run"
  log "installing ${missing[*]} (apt)"
  export DEBIAN_FRONTEND=noninteractive
  for p in 1 2; do
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null && return 0
    [ $p = 2 ] || apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
  done
  die "apt-get install ${missing[*]} failed"
}
file_is_static() { ! grep -q 'ld-linux' <(head -c 4096 "$1" | tr -c '[:print:]' '\n'); }

# --- certificates ------------------------------------------------------------------------------
# One CA; the apiserver's serving certificate; one client certificate in system:masters used by
# every component and by the kubeconfig printed for the user (a single-user, single-node cluster);
# the service-account signing key pair.
make_pki() {
  mkdir -p "$PKI"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=subx-cluster-ca \
      -keyout ca.key -out ca.crt 2>/dev/null
    cat >apiserver.ext <<EOF
subjectAltName=IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
extendedKeyUsage=serverAuth
EOF
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=subx-cluster-admin" \
      -keyout admin.key -out admin.csr 2>/dev/null
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile client.ext -out admin.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  ) || die "creating certificates failed"
  b64() { base64 -w0 "$PKI/$1"; }
  cat >"$KUBECONFIG_PATH" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: subx
    cluster:
      server: https://$NODE_IP:$APISERVER_PORT
      certificate-authority-data: $(b64 ca.crt)
users:
  - name: admin
    user:
      client-certificate-data: $(b64 admin.crt)
      client-key-data: $(b64 admin.key)
contexts:
  - name: subx
    context: { cluster: subx, user: admin }
current-context: subx
EOF
  chmod 600 "$KUBECONFIG_PATH"
}

# --- network -----------------------------------------------------------------------------------
net_up() {
  ip link show "$NODE_IF" >/dev/null 2>&1 || ip link add "$NODE_IF" type bridge
  ip addr replace "$NODE_IP/24" dev "$NODE_IF"
  ip link set "$NODE_IF" up
  # Pod and service addresses never follow the default route off this machine: until the CNI
  # bridge (a more specific /24) exists, and for cluster IPs that kube-proxy has not translated,
  # they end on the port-less node bridge.
  ip route replace "$POD_CIDR" dev "$NODE_IF" src "$NODE_IP"
  ip route replace "$SERVICE_CIDR" dev "$NODE_IF" src "$NODE_IP"
  # Docker sets the FORWARD policy to DROP; pod traffic (bridged and routed) is let through here,
  # and only between pods and the node.
  sysctl -qw net.ipv4.ip_forward=1
  modprobe br_netfilter 2>/dev/null || true
  iptables -N "$FWD_CHAIN" 2>/dev/null || iptables -F "$FWD_CHAIN"
  iptables -A "$FWD_CHAIN" -s "$POD_CIDR" -d "$POD_CIDR" -j ACCEPT
  iptables -A "$FWD_CHAIN" -s "$POD_CIDR" -d "$NODE_IP" -j ACCEPT
  iptables -A "$FWD_CHAIN" -d "$POD_CIDR" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
  iptables -C FORWARD -j "$FWD_CHAIN" 2>/dev/null || iptables -I FORWARD 1 -j "$FWD_CHAIN"
  mkdir -p "$RUN_DIR/cni/net.d"
  cat >"$RUN_DIR/cni/net.d/10-subx.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "subx-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$POD_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$RUN_DIR/cni/ipam",
        "ranges": [[{ "subnet": "$NODE_POD_CIDR", "gateway": "$POD_GATEWAY" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    }
  ]
}
EOF
}

net_down() {
  ip link del "$POD_BRIDGE" 2>/dev/null || true
  ip link del "$NODE_IF" 2>/dev/null || true
  iptables -D FORWARD -j "$FWD_CHAIN" 2>/dev/null || true
  iptables -F "$FWD_CHAIN" 2>/dev/null || true
  iptables -X "$FWD_CHAIN" 2>/dev/null || true
  # the kubelet's own chains (kube-proxy --cleanup removed kube-proxy's)
  local ipt table chain rule
  for ipt in iptables ip6tables; do
    for table in filter nat mangle; do
      for chain in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        { "$ipt" -t "$table" -S 2>/dev/null || true; } | { grep -- "-j $chain\$" || true; } | sed 's/^-A /-D /' | while read -r rule; do
          # shellcheck disable=SC2086 # a rule as iptables -S prints it
          "$ipt" -t "$table" $rule 2>/dev/null || true
        done
        "$ipt" -t "$table" -F "$chain" 2>/dev/null || true
        "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

# --- processes ---------------------------------------------------------------------------------
# start NAME CMD... : runs CMD detached (own session), logs to $RUN_DIR/logs/NAME.log, pid in pids/.
start() {
  local name=$1
  shift
  mkdir -p "$RUN_DIR/logs" "$RUN_DIR/pids"
  setsid nohup "$@" >"$RUN_DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/pids/$name"
}

alive() { [ -f "$RUN_DIR/pids/$1" ] && kill -0 "$(cat "$RUN_DIR/pids/$1")" 2>/dev/null; }

# stop NAME : SIGTERM, up to 10 s, then SIGKILL; only the pid this script started.
stop() {
  local pid i
  [ -f "$RUN_DIR/pids/$1" ] || return 0
  pid=$(cat "$RUN_DIR/pids/$1")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN_DIR/pids/$1"
}

healthz() { curl -sf --max-time 3 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "https://$NODE_IP:$APISERVER_PORT/readyz" >/dev/null; }

start_control_plane() {
  local bin=$CLUSTER_CACHE/bin
  start etcd "$bin/etcd" --name subx --data-dir "$RUN_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "subx=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --quota-backend-bytes 1073741824
  wait_for 60 etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

  start kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --authorization-mode Node,RBAC --anonymous-auth=false \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --kubelet-client-certificate "$PKI/admin.crt" --kubelet-client-key "$PKI/admin.key" \
    --kubelet-preferred-address-types InternalIP \
    --allow-privileged=true --profiling=false --enable-priority-and-fairness=false \
    --event-ttl 30m
  wait_for "$START_TIMEOUT" kube-apiserver healthz

  start kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig "$KUBECONFIG_PATH" --authentication-kubeconfig "$KUBECONFIG_PATH" \
    --authorization-kubeconfig "$KUBECONFIG_PATH" --bind-address 127.0.0.1 --leader-elect=false \
    --allocate-node-cidrs --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" --profiling=false
  start kube-scheduler "$bin/kube-scheduler" \
    --kubeconfig "$KUBECONFIG_PATH" --authentication-kubeconfig "$KUBECONFIG_PATH" \
    --authorization-kubeconfig "$KUBECONFIG_PATH" --bind-address 127.0.0.1 --leader-elect=false --profiling=false
}

start_containerd() {
  mkdir -p "$RUN_DIR/containerd"
  # Its own root, state and socket: a Docker engine's containerd on this machine is left alone.
  cat >"$RUN_DIR/containerd/config.toml" <<EOF
version = 2
root = "$RUN_DIR/containerd/root"
state = "$RUN_DIR/containerd/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # These machines refuse a lower oom_score_adj than the process has; the CRI plugin clamps instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$RUN_DIR/cni/net.d"
  # Registry hosts (certs.d/<host>/hosts.toml): the release registry of scripts/registry.sh.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$RUN_DIR/containerd/certs.d"
EOF
  # The release registry serves plain HTTP on this machine's loopback, which containerd (in the
  # host's network namespace) reaches; the kubelet pulls the chart's images from it.
  mkdir -p "$RUN_DIR/containerd/certs.d/$CLUSTER_REGISTRY"
  cat >"$RUN_DIR/containerd/certs.d/$CLUSTER_REGISTRY/hosts.toml" <<EOF
server = "http://$CLUSTER_REGISTRY"
[host."http://$CLUSTER_REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
  start containerd containerd --config "$RUN_DIR/containerd/config.toml"
  wait_for 60 containerd ctr_ version
}
ctr_() { ctr --address "$CONTAINERD_SOCK" "$@"; }

start_node() {
  local bin=$CLUSTER_CACHE/bin
  mkdir -p "$RUN_DIR/kubelet" "$RUN_DIR/pod-logs"
  cat >"$RUN_DIR/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# These machines mount cgroup v1 (hybrid layout) and run no systemd.
failCgroupV1: false
cgroupDriver: cgroupfs
failSwapOn: false
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: $PKI/ca.crt }
authorization: { mode: AlwaysAllow }
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
# No upstream resolver: pods resolve cluster names only.
resolvConf: ''
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $RUN_DIR/pod-logs
# A shared build machine: never evict for disk, never garbage-collect the preloaded images.
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1% }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 60
EOF
  start kubelet "$bin/kubelet" --config "$RUN_DIR/kubelet/config.yaml" --kubeconfig "$KUBECONFIG_PATH" \
    --root-dir "$RUN_DIR/kubelet" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
  cat >"$RUN_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $KUBECONFIG_PATH }
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
nodePortAddresses: [$NODE_IP/32]
# Leave the machine's conntrack settings as they are.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
EOF
  start kube-proxy "$bin/kube-proxy" --config "$RUN_DIR/kube-proxy.yaml"
  cat >"$RUN_DIR/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
  bind $NODE_IP
  errors
  health 127.0.0.1:18080
  ready 127.0.0.1:18181
  kubernetes cluster.local in-addr.arpa {
    kubeconfig $KUBECONFIG_PATH subx
    pods insecure
    fallthrough in-addr.arpa
  }
  cache 5
}
EOF
  start coredns "$bin/coredns" -conf "$RUN_DIR/Corefile"
  wait_for "$START_TIMEOUT" "node $NODE_NAME Ready" node_ready
  wait_for 60 coredns curl -sf --max-time 2 http://127.0.0.1:18181/ready
  # the controller-manager creates each namespace's default service account; pods wait on it
  wait_for 60 "service account default/default" kubectl_ -n default get serviceaccount default
}
node_ready() { kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True; }

# --- teardown ----------------------------------------------------------------------------------
cluster_down() {
  [ -d "$RUN_DIR" ] || { log "no cluster at $RUN_DIR"; return 0; }
  # Controllers first, so nothing re-creates the pods the kubelet is about to tear down; then the
  # kubelet stops every sandbox (CNI DEL releases the addresses and the network namespaces).
  stop kube-controller-manager
  stop kube-scheduler
  if alive kubelet && alive kube-apiserver; then
    timeout 60 "$CLUSTER_CACHE/bin/kubectl" --kubeconfig "$KUBECONFIG_PATH" delete pods --all -A \
      --grace-period=2 --wait=true >/dev/null 2>&1 || log "some pods did not stop within 60 s"
  fi
  stop kubelet
  stop coredns
  if alive kube-proxy; then
    stop kube-proxy
    "$CLUSTER_CACHE/bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  fi
  stop kube-apiserver
  stop etcd
  if alive containerd; then
    # Whatever is left (a kubelet that died early): kill the tasks of this containerd's namespace.
    local t
    for t in $(ctr_ -n k8s.io tasks ls -q 2>/dev/null); do ctr_ -n k8s.io tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    sleep 1
    for t in $(ctr_ -n k8s.io tasks ls -q 2>/dev/null); do ctr_ -n k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # Mounts under the cluster's directory (overlay snapshots, pod volumes, sandbox /dev/shm).
  local m
  for m in $(awk -v p="$RUN_DIR/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  # The kubelet's cgroups (cgroupfs driver): the pods' are empty once their tasks are gone.
  local c
  for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/kubepods.slice; do
    [ -d "$c" ] || continue
    find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  net_down
  rm -rf "$RUN_DIR"
  log "down: processes stopped, $NODE_IF and $POD_BRIDGE removed, mounts under $RUN_DIR released"
}
