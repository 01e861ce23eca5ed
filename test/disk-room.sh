#!/usr/bin/env bash
# Before `make test`: is there room on disk for the run? Too little fails here, with the numbers,
# instead of as dozens of storage errors and evicted pods half an hour later.
#
# What a run writes (measured 2026-11-28): about 5 GB in the checkout (the real node's containers,
# the test registry's copy of every image, the platforms' state); and once, into caches kept
# between runs, about 21 GB for the Go programs (Go's module and build caches and the binaries),
# 9 GB for Docker's images, 6 GB for the real node's image store and about 1 GB for the registry the
# images reach that store through (at most 4 GB: test/real-node/real-node.ts). What must stay free besides:
# MinIO refuses every write once a write would leave less than 1% of its disk (and it counts a
# stream of unknown length as 1 GiB); the test kubelet evicts pods below 1% free.
#
#   test/disk-room.sh            exit 1 with the numbers when there is too little room
#   DUTIL_TEST_SKIP_DISK_CHECK=1 skips it (a run that knows better)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${DUTIL_TEST_SKIP_DISK_CHECK:-}" = 1 ] && exit 0

cache=${DUTIL_CACHE:-$HOME/.cache/dutil}
mkdir -p "$cache"
gib=$((1024 * 1024)) # in KiB, as df -Pk counts

# Free and total KiB of the filesystem holding $1.
room() { df -Pk "$1" | awk 'NR == 2 { print $4, $2 }'; }

checkout_need=$((5 * gib))
cache_need=0
[ -x "$cache/bin/kube-apiserver" ] || cache_need=$((cache_need + 21 * gib))
[ -d "$cache/docker/image" ] || cache_need=$((cache_need + 9 * gib))
[ -f "$cache/real-node/containerd/dutil-imported.json" ] || cache_need=$((cache_need + 6 * gib))
[ -d "$cache/real-node/transfer-registry/data" ] || cache_need=$((cache_need + 1 * gib))

short=0
check() { # path, KiB the run writes there
  local free total reserve need
  read -r free total < <(room "$1")
  reserve=$((total / 100 + gib))
  need=$(($2 + reserve))
  printf '[disk] %s: %d.%d GB free; the run needs %d.%d GB (%d.%d GB it writes, %d.%d GB kept free)\n' \
    "$(df -P "$1" | awk 'NR == 2 { print $6 }')" $((free / gib)) $((free % gib * 10 / gib)) \
    $((need / gib)) $((need % gib * 10 / gib)) $(($2 / gib)) $(($2 % gib * 10 / gib)) \
    $((reserve / gib)) $((reserve % gib * 10 / gib))
  [ "$free" -ge "$need" ] || short=1
}

if [ "$(stat -c %d .)" = "$(stat -c %d "$cache")" ]; then
  check . $((checkout_need + cache_need))
else
  check . "$checkout_need"
  check "$cache" "$cache_need"
fi
if [ $short = 1 ]; then
  echo '[disk] too little room for make test: free some (old checkouts and their .test-node state),' >&2
  echo '[disk] or set DUTIL_CACHE to a larger disk; DUTIL_TEST_SKIP_DISK_CHECK=1 skips this check.' >&2
  exit 1
fi
