#!/usr/bin/env bash
# Images of the node: the stand-in pause image and the test toolbox (one static busybox each,
# written as image tars by image-tar.py), and the engines' stand-ins, taken from the local Docker
# engine that `scripts/containers.sh images` fills, tagged with the public names the compose file
# uses. The project's images are not loaded: they are released (scripts/release.sh) into the local
# registry (scripts/registry.sh) and the kubelet pulls them from there, as from any registry. Then
# the chart: engines, topics, `helm upgrade --install` from oci://. Sourced by scripts/cluster.sh.

TOOLBOX_IMAGE=subx-cluster/toolbox:1
YOUTUBE_IMAGE=subx-cluster/youtube:dev
# The engines the chart expects beside it (deploy/README.md): their images are the compose file's.
ENGINE_SERVICES=(redis kafka mongo)

import_node_images() {
  local dir=$CLUSTER_CACHE/images
  mkdir -p "$dir"
  python3 scripts/cluster/image-tar.py "$dir/pause.tar" "$PAUSE_IMAGE" /bin/busybox /bin/busybox \
    /bin/busybox sleep 2147483647
  python3 scripts/cluster/image-tar.py "$dir/toolbox.tar" "$TOOLBOX_IMAGE" /bin/busybox /bin/busybox \
    /bin/busybox sleep 3600
  ctr_ -n k8s.io images import "$dir/pause.tar" >/dev/null
  ctr_ -n k8s.io images import "$dir/toolbox.tar" >/dev/null
}

# compose_image SERVICE: the image docker-compose.yml names for SERVICE, ${VAR:-default} resolved
# as compose resolves it (the variable if set, else the default): what `scripts/containers.sh
# images` builds and tags.
compose_image() {
  awk -v svc="  $1:" '
    /^services:/ { services = 1; next }
    services && $0 == svc { inside = 1; next }
    inside && /^  [a-z]/ { exit }
    inside && /^    image:/ { sub(/^    image: */, ""); print; exit }
  ' docker-compose.yml |
    python3 -c 'import os, re, sys; print(re.sub(r"\$\{([A-Z_]+):-([^}]*)\}", lambda m: os.environ.get(m[1]) or m[2], sys.stdin.read().strip()))'
}

# The images loaded into the node: the engines' (the chart's come from the registry).
cluster_images() {
  local s
  for s in "${ENGINE_SERVICES[@]}"; do compose_image "$s"; done | sort -u
}

# The recorded YouTube platform's pod image (test/cluster/youtube), on the stand-in node:24-slim.
build_youtube_image() {
  local ctx=$CLUSTER_CACHE/ctx/youtube
  rm -rf "$ctx" && mkdir -p "$ctx/packages/testing/src" "$ctx/node_modules/@bufbuild"
  [ -d node_modules/@bufbuild/protobuf ] || die "node_modules/@bufbuild/protobuf missing: run npm ci first"
  cp -r packages/testing/src/fake-youtube "$ctx/packages/testing/src/"
  cp -r packages/testing/fixtures-recorded packages/testing/fixtures-synthetic "$ctx/packages/testing/"
  cp -rL node_modules/@bufbuild/protobuf "$ctx/node_modules/@bufbuild/"
  # main.ts keeps its repository path, so its import of the fake is the same here and in the image
  mkdir -p "$ctx/test/cluster/youtube"
  cp test/cluster/youtube/main.ts "$ctx/test/cluster/youtube/"
  cp test/cluster/youtube/Dockerfile "$ctx/"
  echo '{ "type": "module" }' >"$ctx/package.json"
  mkdir -p "$CLUSTER_CACHE/logs"
  DOCKER_BUILDKIT=0 docker build -t "$YOUTUBE_IMAGE" "$ctx" >"$CLUSTER_CACHE/logs/youtube-image.log" 2>&1 ||
    { tail -20 "$CLUSTER_CACHE/logs/youtube-image.log" >&2; die "building $YOUTUBE_IMAGE failed"; }
}

# Without scripts/containers.sh (it lands with the container work): the subx images straight from
# deploy/docker/Dockerfile, on a node:24-slim that must already be in Docker.
build_subx_images_directly() {
  local svc
  for svc in gateway extractor comments ai billing jobs dashboard; do
    docker image inspect "subx/$svc:dev" >/dev/null 2>&1 && continue
    log "images: docker build subx/$svc:dev (deploy/docker/Dockerfile)"
    mkdir -p "$CLUSTER_CACHE/logs"
    DOCKER_BUILDKIT=0 docker build -f deploy/docker/Dockerfile --build-arg "SERVICE=$svc" -t "subx/$svc:dev" . \
      >"$CLUSTER_CACHE/logs/$svc-image.log" 2>&1 ||
      { tail -20 "$CLUSTER_CACHE/logs/$svc-image.log" >&2; die "building subx/$svc:dev failed"; }
  done
}

load_project_images() {
  local images=() missing=() i
  mapfile -t images < <(cluster_images)
  if [ -f scripts/containers.sh ]; then
    log "images: scripts/containers.sh images (the project's images and the stand-ins, in Docker)"
    bash scripts/containers.sh images >&2 || die "scripts/containers.sh images failed"
  else
    build_subx_images_directly
  fi
  command -v docker >/dev/null || die "no docker: the images come from the local Docker engine (scripts/containers.sh engine)"
  build_youtube_image
  images+=("$YOUTUBE_IMAGE")
  for i in "${images[@]}"; do docker image inspect "$i" >/dev/null 2>&1 || missing+=("$i"); done
  [ ${#missing[@]} -eq 0 ] || die "images missing from Docker: ${missing[*]} (build them with: bash scripts/containers.sh images)"
  log "images: loading ${#images[@]} images into the node: ${images[*]}"
  docker save "${images[@]}" | ctr_ -n k8s.io images import - >/dev/null || die "importing images into the node failed"
}

# The previous and the current release into the local registry: images with labels and SBOMs,
# the chart as an OCI artifact (scripts/release.sh). The builds reuse the layers of
# `scripts/containers.sh images`. A tree with local changes is released as <sha>-dirty.
publish_releases() {
  REGISTRY_ADDR=127.0.0.1:${CLUSTER_REGISTRY##*:} bash scripts/registry.sh up >/dev/null ||
    die "the release registry did not start"
  local v
  for v in "$PREVIOUS_VERSION" "$RELEASE_VERSION"; do
    log "release $v into $CLUSTER_REGISTRY (scripts/release.sh)"
    RELEASE_ALLOW_DIRTY=1 REGISTRY=$CLUSTER_REGISTRY RELEASE_OUT=$RUN_DIR/releases/$v HELM=$HELM \
      bash scripts/release.sh "$v" >/dev/null || die "releasing $v failed"
  done
}

# The chart of a release in the registry (chart_ref, chart_args VERSION), with the CI values: its
# images are the ones the release names (its appVersion, from the registry it was pushed to).
chart_ref() { echo "oci://$CLUSTER_REGISTRY/charts/subx"; }
chart_args() { echo "--plain-http --version $1 -f $CI_VALUES --namespace $NAMESPACE"; }

# --- the chart ---------------------------------------------------------------------------------
install_engines() {
  kubectl_ create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  kubectl_ -n "$NAMESPACE" create configmap kafka-topics --from-file=kafka-topics.sh=scripts/kafka-topics.sh \
    --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  sed -e "s|@REDIS_IMAGE@|$(compose_image redis)|" -e "s|@KAFKA_IMAGE@|$(compose_image kafka)|" \
    -e "s|@MONGO_IMAGE@|$(compose_image mongo)|" -e "s|@YOUTUBE_IMAGE@|$YOUTUBE_IMAGE|" \
    "$ENGINES_MANIFEST" | kubectl_ -n "$NAMESPACE" apply -f - >/dev/null
  log "chart: waiting for the engines (redis, kafka, mongo, youtube) and the kafka-topics job"
  kubectl_ -n "$NAMESPACE" rollout status deploy/redis deploy/kafka deploy/mongo deploy/youtube --timeout=300s >&2 ||
    die "engines not available (kubectl -n $NAMESPACE get pods)"
  kubectl_ -n "$NAMESPACE" wait --for=condition=complete job/kafka-topics --timeout=300s >&2 ||
    die "kafka-topics job did not complete (kubectl -n $NAMESPACE logs job/kafka-topics)"
}

# The Prometheus-operator CRDs (from its Go module's example/prometheus-operator-crd), so the
# chart's ServiceMonitor and PrometheusRule are validated by the apiserver against their schemas.
install_prometheus_crds() {
  local dir
  dir=$(cd /tmp && GOWORK=off GOFLAGS=-mod=mod "$(go_bin)" mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') ||
    die "go mod download prometheus-operator $PROMETHEUS_OPERATOR_VERSION failed"
  local crd
  for crd in servicemonitors prometheusrules; do
    # server-side: these CRDs are too large for the last-applied annotation of a client-side apply
    kubectl_ apply --server-side -f "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" >/dev/null
  done
  kubectl_ wait --for=condition=established --timeout=60s \
    crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com >/dev/null
}

install_chart() {
  export KUBECONFIG=$KUBECONFIG_PATH
  install_prometheus_crds
  install_engines
  log "chart: helm upgrade --install $RELEASE $(chart_ref) --version $PREVIOUS_VERSION -f $CI_VALUES (waits for every Deployment)"
  # shellcheck disable=SC2046 # chart_args: one word per flag
  "$HELM" upgrade --install "$RELEASE" "$(chart_ref)" $(chart_args "$PREVIOUS_VERSION") \
    --wait --timeout 10m >&2 || die "helm install failed (kubectl -n $NAMESPACE get pods; logs: $RUN_DIR/logs)"
}
