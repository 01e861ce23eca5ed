#!/usr/bin/env bash
# `make test`: every phase in order, each timed, the wall time of each printed at the end with
# the plain closing line CI reads. A failed phase does not hide the others' results: unit and
# integration tests both run and both count; a failed install or build stops the run.
#
#   deps         npm packages, Debian packages (Redis, PostgreSQL, qpdf, Chromium, ...), schemathesis
#   binaries     etcd, Kubernetes, MinIO, Helm from the Go module proxy (cached in $DUTIL_CACHE)
#   build        TypeScript to dist/
#   unit         vitest --project unit
#   images       the container images (Debian's Docker engine)
#   integration  vitest --project integration, on the real local platform
set -uo pipefail
cd "$(dirname "$0")/.."

phases=$(mktemp)
trap 'rm -f "$phases"' EXIT
rm -f .test-results.*.json
status=0

export PHASES_FILE=$phases
source test/phase.sh

report() {
  printf '\n[make test] phase times (wall):\n'
  local total=0
  while read -r name ms rc; do
    printf '  %-12s %6d.%d s%s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) "$([ "$rc" = 0 ] || echo "  (failed: exit $rc)")"
    total=$((total + ms))
  done <"$phases"
  printf '  %-12s %6d.%d s\n' total $((total / 1000)) $((total % 1000 / 100))
  node test/print-summary.mjs .test-results.unit.json .test-results.integration.json
}

if ! phase deps test/platform/install-deps.sh ||
  ! phase binaries test/platform/build-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio helm ||
  ! phase build bash -c 'rm -rf dist && npm run --silent build'; then
  report
  exit 1
fi

phase unit npx vitest run --project unit --reporter=default --reporter=json --outputFile.json=.test-results.unit.json || status=1

# Images and the integration tests share one Docker engine (started here when none runs). Test
# images are tagged per checkout: two worktrees testing at once share the engine, never their images.
export DUTIL_IMAGE_TAG=${DUTIL_IMAGE_TAG:-test-$(printf '%s' "$PWD" | sha256sum | cut -c1-10)}
images/docker-engine.sh run bash -c '
  source test/phase.sh
  phase images images/build-images.sh || echo "[images] build failed: the image tests will fail" >&2
  # Each fault of test/faults/ strikes a burst of DUTIL_FAULT_BURST jobs here (make test-faults: 200).
  DUTIL_FAULT_BURST=${DUTIL_FAULT_BURST:-30} phase integration npx vitest run --project integration --reporter=default --reporter=json --outputFile.json=.test-results.integration.json
' || status=1

report
exit $status
