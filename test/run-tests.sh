#!/usr/bin/env bash
# `make test`: every phase in order, each timed, the wall time of each printed at the end with
# the plain closing line CI reads. A failed phase does not hide the others' results: unit and
# integration tests both run and both count; a failed install or build stops the run.
#
#   disk         room on disk for the run (test/disk-room.sh), or a clear stop
#   deps         npm packages, Debian packages (Redis, PostgreSQL, qpdf, Chromium, containerd, ...), schemathesis
#   binaries     etcd, Kubernetes, MinIO, Helm, Jaeger from the Go module proxy (cached in $DUTIL_CACHE)
#   build        TypeScript to dist/
#   then two lines of phases side by side, each phase timed:
#   images       the container images (Debian's Docker engine)
#   lint         ESLint (typescript-eslint, type-aware) and Prettier's check: `make lint`
#   unit         vitest --project unit --no-isolate
#   faults       vitest --project integration test/faults: faults during bursts of jobs, on a
#                platform of their own (.test-faults, ports 600 up), and then the integration
#                files of SIDE_FILES on that platform (the lines' lengths even out)
#   node         vitest --project node: the chart's images on a real kubelet + containerd
#                (test/node/, docs/adr/0015); skipped with the reason printed where the host cannot
#   beside them:
#   integration  vitest --project integration test/integration but SIDE_FILES, on the real local
#                platform (from the start; its images test waits for the images phase)
set -uo pipefail
cd "$(dirname "$0")/.."

phases=$(mktemp)
trap 'rm -f "$phases"' EXIT
rm -f .test-results.*.json .test-results.node-skipped.txt .test-results.node-setup-failure.txt .test-results.node.log .test-results.faults.log .test-results.side.log .test-results.images-done
status=0

export PHASES_FILE=$phases
source test/phase.sh

# Integration files that run in the first line, on the fault tests' platform after them: the
# integration line is the longer one, and these need nothing of it (no image, no state of another
# file). Every file of test/integration runs once, in one line or the other.
export SIDE_FILES="test/integration/fuzz.test.ts test/integration/gotenberg-clients.test.ts"

started=$(date +%s%N)
report() {
  printf '\n[make test] phase times (wall; images, lint, unit, faults and node run beside integration):\n'
  while read -r name ms rc; do
    printf '  %-12s %6d.%d s%s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) "$([ "$rc" = 0 ] || echo "  (failed: exit $rc)")"
  done <"$phases"
  local total=$((($(date +%s%N) - started) / 1000000))
  printf '  %-12s %6d.%d s\n' total $((total / 1000)) $((total % 1000 / 100))
  # CI keeps the end of the output: a failed real-node tier's log ends it too (its setup's
  # progress lines and the error that stopped it).
  if grep -q '^node .* [1-9][0-9]*$' "$phases" && [ -f .test-results.node.log ]; then
    printf '\n[node] the end of the failed real-node tier'"'"'s log (all of it: .test-results.node.log):\n'
    sed 's/\x1b\[[0-9;]*m//g' .test-results.node.log | grep -v '^ *✓' | tail -n 80
  fi
  node test/print-summary.mjs .test-results.unit.json .test-results.faults.json .test-results.node.json .test-results.integration.json
}

# vitest runs from node_modules/.bin, not through npx: its own exit status (or the signal that
# ended it) reaches the phase, with no npm and shell in between.
if ! phase disk test/disk-room.sh ||
  ! phase deps test/platform/install-deps.sh --node ||
  ! phase binaries test/platform/build-binaries.sh etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio helm promtool helm-docs jaeger seccomp-profile kubelet kube-proxy coredns kube-router registry ||
  ! phase build bash -c 'rm -rf dist clients/typescript/dist && npm run --silent build && npm --prefix clients/typescript run --silent build'; then
  report
  exit 1
fi

# Images and the integration tests share one Docker engine (started here when none runs). Test
# images are tagged per checkout: two worktrees testing at once share the engine, never their images.
export DUTIL_IMAGE_TAG=${DUTIL_IMAGE_TAG:-test-$(printf '%s' "$PWD" | sha256sum | cut -c1-10)}
images/docker-engine.sh run bash -c '
  source test/phase.sh
  # Two lines side by side: the images, lint, unit, the fault tests and the real-node tier (each
  # of the last two on a platform of its own: ports and state directory) in one; the integration
  # tests, on the local platform, in the other, from the start: the one file that runs the images
  # (test/integration/images.test.ts) waits for the images phase to write its outcome into
  # DUTIL_IMAGES_DONE_FILE. At most two platforms run at once. The first line prints its output
  # when both are done.
  export DUTIL_IMAGES_DONE_FILE=$PWD/.test-results.images-done
  rm -f "$DUTIL_IMAGES_DONE_FILE"
  (
    rc=0
    if phase images images/build-images.sh; then echo ok >"$DUTIL_IMAGES_DONE_FILE"; else
      echo "[images] build failed: the image tests will fail" >&2
      echo failed >"$DUTIL_IMAGES_DONE_FILE"
    fi
    phase lint npm run --silent lint || rc=1
    # --no-isolate: one module graph for every unit file (vitest sets isolation for all projects
    # at once, so here rather than in its config). An isolated run spent most of its time importing
    # the same modules again for each of 166 files; no unit test leaves state another one reads,
    # and the files pass in any order (--sequence.shuffle.files).
    phase unit node_modules/.bin/vitest run --project unit --no-isolate --reporter=default --reporter=json --outputFile.json=.test-results.unit.json || rc=1
    # Each fault of test/faults/ strikes a burst of DUTIL_FAULT_BURST jobs (make test-faults: 200),
    # the operator killed DUTIL_FAULT_KILLS times (make test-faults: 20), on a platform of their
    # own (its state in .test-faults, its ports 600 up): the integration tests run beside them.
    # SIDE_FILES follow on the same platform.
    DUTIL_TEST_DIR=.test-faults DUTIL_TEST_PORT_OFFSET=600 DUTIL_FAULT_BURST=${DUTIL_FAULT_BURST:-30} DUTIL_FAULT_KILLS=${DUTIL_FAULT_KILLS:-8} \
      phase faults node_modules/.bin/vitest run --project integration test/faults $SIDE_FILES --reporter=default --reporter=json --outputFile.json=.test-results.faults.json >.test-results.faults.log 2>&1 || rc=1
    phase node node_modules/.bin/vitest run --project node --reporter=default --reporter=json --outputFile.json=.test-results.node.json >.test-results.node.log 2>&1 || rc=1
    exit $rc
  ) >.test-results.side.log 2>&1 &
  side=$!
  # --no-isolate as for unit: the files run one after another in one process, importing the
  # platform helpers once.
  phase integration node_modules/.bin/vitest run --project integration --no-isolate test/integration $(printf -- "--exclude %s " $SIDE_FILES) --reporter=default --reporter=json --outputFile.json=.test-results.integration.json
  integration_rc=$?
  wait $side
  side_rc=$?
  printf "\n[make test] images, lint and unit (beside the integration tests):\n"
  cat .test-results.side.log
  printf "\n[faults] the fault tests (test/faults/, after unit, on a platform of their own) and %s:\n" "$SIDE_FILES"
  cat .test-results.faults.log
  printf "\n[node] the real-node tier (test/node/, after the fault tests):\n"
  cat .test-results.node.log
  [ $side_rc = 0 ] && [ $integration_rc = 0 ]
' || status=1

report
exit $status
