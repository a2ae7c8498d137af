#!/usr/bin/env bash
# The shape of the code (`npm test`, CONTRIBUTING.md "Tests"): dependency-cruiser fails on an import circle
# or an import pointing the wrong way (.dependency-cruiser.cjs says which) and on folders importing
# each other (.dependency-cruiser-rooms.cjs), knip on unused files,
# exports and dependencies (knip.config.ts). Both read the sources only: no network, no engines.
set -euo pipefail
cd "$(dirname "$0")/.."
npx --no-install depcruise --config .dependency-cruiser.cjs --output-type err packages services scripts test deploy
npx --no-install depcruise --config .dependency-cruiser-rooms.cjs --output-type err packages services
npx --no-install knip --no-progress
