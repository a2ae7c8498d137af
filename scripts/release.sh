#!/usr/bin/env bash
# scripts/release.sh VERSION — a release an operator can install without building anything:
#
#   1. every image of deploy/docker/Dockerfile (gateway, extractor, comments, ai, billing, jobs,
#      dashboard) built from this tree with the OCI labels org.opencontainers.image.{source,
#      revision,version,title,licenses};
#   2. a CycloneDX SBOM per image, made from the image's own pruned workspace (its /app: the
#      package.json, package-lock.json and installed node_modules the image runs) with
#      @cyclonedx/cyclonedx-npm, stored in the image at /app/sbom.cdx.json and beside the release
#      in $RELEASE_OUT/sbom/;
#   3. the images pushed to $REGISTRY as <registry>/subx/<component>:VERSION;
#   4. the Helm chart packaged with version = appVersion = VERSION and its default image registry
#      set to $REGISTRY, pushed with `helm push` as oci://<registry>/charts/subx:VERSION.
#
#   REGISTRY=localhost:5000 bash scripts/release.sh 1.2.0
#   helm install subx oci://localhost:5000/charts/subx --version 1.2.0 ...
#
# Environment:
#   REGISTRY              where to push (default localhost:5000: scripts/registry.sh up)
#   REGISTRY_PLAIN_HTTP   push the chart over plain HTTP (default: true for localhost/127.0.0.1)
#   RELEASE_OUT           SBOMs, chart package, image digests (default dist/release/VERSION)
#   RELEASE_SOURCE_URL    org.opencontainers.image.source (default https://github.com/subx/subx)
#   RELEASE_ALLOW_DIRTY   1: release a tree with uncommitted changes (revision <sha>-dirty)
#   RELEASE_COMPONENTS    the images to release (default: all seven; empty: the chart only)
#   RELEASE_SBOM_CACHE    SBOMs by image id, reused for an identical image (default
#                         ~/.cache/subx-release/sbom; the SBOM is reproducible: no timestamp)
#   HELM                  helm binary (default: the one scripts/validate-deploy.sh builds)
#
# Images are built with the classic builder on the layers `scripts/containers.sh images` (compose)
# already cached: the labels and the SBOM are one small layer on top, so a release of an unchanged
# tree rebuilds nothing. Progress on stderr; stdout ends with the chart reference.
set -euo pipefail
cd "$(dirname "$0")/.."

SELF=release.sh
log() { printf '[%s %s] %s\n' "$SELF" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '%s: ERROR: %s\n' "$SELF" "$*" >&2; exit 1; }

VERSION=${1:-}
# Semantic Versioning 2.0.0, without build metadata: an image tag cannot hold a '+'.
SEMVER='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[ -n "$VERSION" ] || die "usage: $SELF VERSION (a semantic version such as 1.2.0 or 1.3.0-rc.1)"
[[ $VERSION =~ $SEMVER ]] ||
  die "VERSION '$VERSION' is not a semantic version MAJOR.MINOR.PATCH[-PRERELEASE] (no leading 'v', no '+build')"

# The version the API reports (/health, /openapi.json) is the gateway's package.json version:
# a release of another version would report a wrong one.
APP_VERSION=$(node -p 'require("./services/gateway/package.json").version')
[ "${VERSION%%-*}" = "$APP_VERSION" ] ||
  die "VERSION $VERSION does not match the version the services report ($APP_VERSION, services/*/package.json): bump them and CHANGELOG.md first"

REGISTRY=${REGISTRY:-localhost:5000}
REGISTRY=${REGISTRY%/}
case ${REGISTRY%%:*} in localhost | 127.0.0.1) plain_default=true ;; *) plain_default=false ;; esac
PLAIN_HTTP=${REGISTRY_PLAIN_HTTP:-$plain_default}
SOURCE_URL=${RELEASE_SOURCE_URL:-https://github.com/subx/subx}
OUT=${RELEASE_OUT:-dist/release/$VERSION}
HELM=${HELM:-${SUBX_TOOLS_DIR:-${HOME:-/root}/.cache/subx-tools}/bin/helm}
read -r -a COMPONENTS <<<"${RELEASE_COMPONENTS-gateway extractor comments ai billing jobs dashboard}"
CYCLONEDX=node_modules/.bin/cyclonedx-npm
LICENSE_ID=$(node -p 'require("./package.json").license ?? ""' 2>/dev/null || true)
# Every wait is bounded: a registry that does not answer fails the release, it does not hang it.
CURL_TIMEOUT=${RELEASE_HTTP_TIMEOUT:-10}

[ -x "$HELM" ] || die "helm not found at $HELM (bash scripts/validate-deploy.sh builds it)"
if [ ${#COMPONENTS[@]} -gt 0 ]; then
  [ -x "$CYCLONEDX" ] || die "$CYCLONEDX missing: run npm ci first"
  command -v docker >/dev/null || die "no docker (bash scripts/containers.sh engine)"
fi
for c in ${COMPONENTS[@]+"${COMPONENTS[@]}"}; do
  [ -f "services/$c/package.json" ] || die "RELEASE_COMPONENTS: '$c' is not a service"
done

REVISION=$(git rev-parse HEAD 2>/dev/null) || die "not a git checkout: the revision label needs one"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  [ "${RELEASE_ALLOW_DIRTY:-}" = 1 ] ||
    die "the tree has uncommitted changes: commit them, or set RELEASE_ALLOW_DIRTY=1 (revision $REVISION-dirty)"
  REVISION=$REVISION-dirty
fi

scheme=https
[ "$PLAIN_HTTP" = true ] && scheme=http
code=$(curl -s --max-time "$CURL_TIMEOUT" -o /dev/null -w '%{http_code}' "$scheme://$REGISTRY/v2/" || true)
case $code in
  200 | 401) ;;
  *) die "registry $REGISTRY does not answer ($scheme://$REGISTRY/v2/ -> ${code:-no answer}; for a local one: bash scripts/registry.sh up)" ;;
esac

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT/sbom" "$OUT/logs"
OUT=$(realpath "$OUT")
: >"$OUT/images.txt"
t_start=$SECONDS

SBOM_CACHE=${RELEASE_SBOM_CACHE:-${HOME:-/root}/.cache/subx-release/sbom}
mkdir -p "$SBOM_CACHE"

# image_sbom IMAGE FILE : the CycloneDX SBOM of the workspace IMAGE runs (/app), production
# dependencies as installed there. npm reads the installed tree from its manifests alone, so only
# those leave the image: every package.json and package-lock.json under /app and the symlinks
# (workspaces in node_modules), about 4 MB instead of the whole /app. An image already described
# (same id: same layers) gets its cached SBOM.
image_sbom() {
  local image=$1 file=$2 dir=$WORK/app id
  id=$(docker image inspect -f '{{.Id}}' "$image")
  if [ -s "$SBOM_CACHE/${id#sha256:}.cdx.json" ]; then
    cp "$SBOM_CACHE/${id#sha256:}.cdx.json" "$file"
    return 0
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  docker run --rm --network none --user 1000 --entrypoint sh "$image" -c \
    'cd /app && find . \( -type l -o -name package.json -o -name package-lock.json \) -print | tar -c --no-recursion -T -' |
    tar -x -C "$dir" -f - || return 1
  # The runtime image keeps the root manifest's devDependencies (turbo prune), never installed:
  # --omit dev describes what is there.
  (cd "$dir" && "$OLDPWD/$CYCLONEDX" --omit dev --spec-version 1.6 --output-format JSON --mc-type application \
    --output-reproducible --output-file "$file") >>"$OUT/logs/sbom.log" 2>&1 || return 1
  cp "$file" "$SBOM_CACHE/${id#sha256:}.cdx.json.tmp" && mv "$SBOM_CACHE/${id#sha256:}.cdx.json.tmp" "$SBOM_CACHE/${id#sha256:}.cdx.json"
}

for c in ${COMPONENTS[@]+"${COMPONENTS[@]}"}; do
  t0=$SECONDS
  base=subx-release/$c:$VERSION-base
  image=$REGISTRY/subx/$c:$VERSION
  log "$c: docker build (deploy/docker/Dockerfile, SERVICE=$c; cached layers reused)"
  DOCKER_BUILDKIT=0 docker build -f deploy/docker/Dockerfile --build-arg "SERVICE=$c" -t "$base" . \
    >"$OUT/logs/$c-build.log" 2>&1 || { tail -n 30 "$OUT/logs/$c-build.log" >&2; die "building $c failed"; }
  log "$c: SBOM of the image's /app (@cyclonedx/cyclonedx-npm)"
  image_sbom "$base" "$OUT/sbom/$c.cdx.json" ||
    { tail -n 20 "$OUT/logs/sbom.log" >&2; die "the SBOM of $c failed (log: $OUT/logs/sbom.log)"; }
  count=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).components.length' "$OUT/sbom/$c.cdx.json")
  [ "$count" -gt 0 ] || die "the SBOM of $c lists no components"
  # The SBOM and the labels: one layer over the cached build.
  mkdir -p "$WORK/final"
  cp "$OUT/sbom/$c.cdx.json" "$WORK/final/sbom.cdx.json"
  printf 'FROM %s\nCOPY sbom.cdx.json /app/sbom.cdx.json\n' "$base" >"$WORK/final/Dockerfile"
  labels=(
    --label "org.opencontainers.image.source=$SOURCE_URL"
    --label "org.opencontainers.image.revision=$REVISION"
    --label "org.opencontainers.image.version=$VERSION"
    --label "org.opencontainers.image.title=subx-$c"
  )
  [ -z "$LICENSE_ID" ] || labels+=(--label "org.opencontainers.image.licenses=$LICENSE_ID")
  DOCKER_BUILDKIT=0 docker build "${labels[@]}" -t "$image" "$WORK/final" >>"$OUT/logs/$c-build.log" 2>&1 ||
    { tail -n 20 "$OUT/logs/$c-build.log" >&2; die "labelling $c failed"; }
  docker rmi "$base" >/dev/null 2>&1 || true
  log "$c: docker push $image"
  docker push "$image" >"$OUT/logs/$c-push.log" 2>&1 || { tail -n 20 "$OUT/logs/$c-push.log" >&2; die "pushing $image failed"; }
  digest=$(docker image inspect --format '{{join .RepoDigests "\n"}}' "$image" | grep -F "$REGISTRY/subx/$c@" | head -1)
  [ -n "$digest" ] || die "no digest for $image after the push"
  echo "$image $digest" >>"$OUT/images.txt"
  log "$c: $digest ($count SBOM components, $((SECONDS - t0)) s)"
done

# The chart: version = appVersion = VERSION, images from $REGISTRY by default.
log "chart: helm package (version $VERSION, images from $REGISTRY)"
cp -r deploy/helm/subx "$WORK/subx"
values=$WORK/subx/values.yaml
[ "$(grep -c "^    registry: ''$" "$values")" = 1 ] || die "values.yaml: global.image.registry ('') not found where expected"
sed -i "s|^    registry: ''$|    registry: $REGISTRY|" "$values"
"$HELM" lint --strict "$WORK/subx" --set secrets.values.ADMIN_TOKEN=lint-admin-token-0123456789abcdef0123 \
  --set secrets.values.API_KEY_PEPPER=lint-pepper-0123456789abcdef-0123456789 >"$OUT/logs/chart.log" 2>&1 ||
  { cat "$OUT/logs/chart.log" >&2; die "helm lint of the release chart failed"; }
rm -f "$OUT"/subx-*.tgz
"$HELM" package "$WORK/subx" --version "$VERSION" --app-version "$VERSION" -d "$OUT" >>"$OUT/logs/chart.log" 2>&1 ||
  { cat "$OUT/logs/chart.log" >&2; die "helm package failed"; }
push_args=()
[ "$PLAIN_HTTP" = true ] && push_args+=(--plain-http)
"$HELM" push "$OUT/subx-$VERSION.tgz" "oci://$REGISTRY/charts" "${push_args[@]}" >>"$OUT/logs/chart.log" 2>&1 ||
  { tail -n 20 "$OUT/logs/chart.log" >&2; die "helm push failed"; }
chart_digest=$(sed -n 's/^Digest: *//p' "$OUT/logs/chart.log" | tail -1)
echo "oci://$REGISTRY/charts/subx:$VERSION ${chart_digest:-}" >>"$OUT/images.txt"
log "released $VERSION (revision $REVISION) in $((SECONDS - t_start)) s: $OUT/images.txt"
echo "oci://$REGISTRY/charts/subx --version $VERSION"
