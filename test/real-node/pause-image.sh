#!/usr/bin/env bash
# Builds the pod sandbox image (test/platform/tools/pause, a static Go binary) as an OCI image
# layout tar (static-image.sh), run as 65535:65535. Every pod needs it; no registry is reachable.
#
#   test/real-node/pause-image.sh OUT.tar
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here/platform/tools/pause" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags '-s -w' -o "$work/pause" .)
"$here/real-node/static-image.sh" "$1" "$work/pause" 65535:65535
