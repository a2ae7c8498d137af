#!/usr/bin/env bash
# The one test command (README: `npm test`): static checks, contract freshness, then every test.
# Integration tests use REDIS_URL / KAFKA_BROKERS / MONGO_URL when set (CI sets them through
# `scripts/engines.sh up`), testcontainers when Docker is available, and are otherwise skipped
# with a loud notice — except under CI=true, where a missing engine fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "lockfile: accepted by npm ci"
node scripts/lockfile-fill-optional.mjs --check
step "typecheck"
npx --no-install turbo run typecheck --output-logs=errors-only
npx --no-install tsc -p tsconfig.json   # root scripts/ and test/ (not a workspace)
step "lint"
npx --no-install eslint . --max-warnings 0
step "format"
npx --no-install prettier --check . --log-level warn
step "dependencies: no import circle, none pointing up (dependency-cruiser); nothing unused (knip)"
bash scripts/check-dependencies.sh
step "proto: lint, generated code fresh, no breaking change"
bash scripts/proto-check.sh
bash scripts/proto-breaking.sh
if [[ ${CI:-} == true ]]; then
  step "fuzzing: schemathesis against the live API of npm start (scripts/schemathesis.sh)"
  bash scripts/schemathesis.sh
fi
# last, so that the run ends with the summary of what ran and 'N passed, N failed'
step "tests (unit + integration)"
npx --no-install vitest run   # reporters (default + the summary of what ran): vitest.config.ts
