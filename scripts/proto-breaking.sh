#!/usr/bin/env bash
# Fails when proto/ changes break wire or source compatibility (`buf breaking`, rules FILE) against:
#   - $PROTO_BREAKING_AGAINST (a commit-ish), when set, and nothing else;
#   - otherwise the last release: the newest tag `v<digits>...` reachable from HEAD, if any (what
#     consumers run today: a break spread over several commits still shows against it);
#   - and on a branch other than main: the merge-base with main (origin/main when there is no local
#     main); on main: the previous commit (HEAD~1).
# The buf binary is the @bufbuild/buf npm package's; the bases are read from the local git history,
# so the check needs no network.
# A repository whose HEAD has no parent, or a shallow clone without it, has nothing to compare
# against and passes with a loud notice (check out with fetch-depth >= 2 to get the check).
# Only the committed proto/ of the base is read; the working tree's proto/ is what is checked.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "proto-breaking: $*" >&2; exit 1; }

base=""
if [[ -n ${PROTO_BREAKING_AGAINST:-} ]]; then
  base=$(git rev-parse --verify --quiet "${PROTO_BREAKING_AGAINST}^{commit}") ||
    die "PROTO_BREAKING_AGAINST=${PROTO_BREAKING_AGAINST} is not a commit here"
else
  branch=$(git rev-parse --abbrev-ref HEAD)
  main_ref=""
  for candidate in main origin/main; do
    if git rev-parse --verify --quiet "$candidate^{commit}" >/dev/null; then main_ref=$candidate; break; fi
  done
  if [[ $branch != main && -n $main_ref ]] && ! git merge-base --is-ancestor HEAD "$main_ref"; then
    base=$(git merge-base HEAD "$main_ref") || die "no merge-base between HEAD and $main_ref (shallow clone?)"
  elif git rev-parse --verify --quiet 'HEAD~1^{commit}' >/dev/null; then
    base=$(git rev-parse 'HEAD~1')
  elif [[ $(git rev-parse --is-shallow-repository) == true ]]; then
    # Not a schema problem: the history to compare against is missing. Say so loudly, do not fail.
    echo "proto-breaking: WARNING: shallow clone without HEAD~1, nothing to compare against (fetch with depth >= 2 to check)" >&2
    exit 0
  else
    echo "proto-breaking: HEAD has no parent commit; nothing to compare against"
    exit 0
  fi
fi

bases=("$base")
if [[ -z ${PROTO_BREAKING_AGAINST:-} ]]; then
  release=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || true)
  if [[ -n $release ]]; then
    release_commit=$(git rev-parse "$release^{commit}")
    if [[ $release_commit != "$base" ]]; then bases=("$release_commit" "$base"); fi
  else
    echo "proto-breaking: no release tag (v*) reachable from HEAD; checking against $(git rev-parse --short "$base") only"
  fi
fi

for against in "${bases[@]}"; do
  name=$(git describe --tags --exact-match "$against" 2>/dev/null || git rev-parse --short "$against")
  if ! git cat-file -e "$against:proto" 2>/dev/null; then
    echo "proto-breaking: $name has no proto/ directory; nothing to compare against"
    continue
  fi
  echo "proto-breaking: buf breaking proto against $name"
  npx --no-install buf breaking proto --against ".git#ref=$against,subdir=proto" ||
    die "proto/ breaks compatibility with $name (docs/events.md, \"Schema evolution\": add a field or a new package instead)"
done
echo "proto-breaking: no breaking changes"
