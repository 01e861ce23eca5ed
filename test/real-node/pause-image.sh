#!/usr/bin/env bash
# Builds the pod sandbox image (test/platform/tools/pause, a static Go binary) as an OCI image
# layout tar that `ctr images import` takes: one layer holding /pause, run as 65535:65535. No
# registry is reachable here, so the sandbox image every pod needs is made locally.
#
#   test/real-node/pause-image.sh OUT.tar
set -euo pipefail
out=$(realpath -m "$1")
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/rootfs" "$work/image/blobs/sha256"
(cd "$here/platform/tools/pause" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags '-s -w' -o "$work/rootfs/pause" .)
# A reproducible layer: fixed owner, mode and time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00Z' -C "$work/rootfs" -cf "$work/layer.tar" pause

blob() { # file -> prints sha256 digest, stores the blob
  local digest
  digest=$(sha256sum "$1" | cut -d' ' -f1)
  cp "$1" "$work/image/blobs/sha256/$digest"
  echo "$digest"
}
size() { stat -c %s "$1"; }

layer=$(blob "$work/layer.tar")
cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:$layer"]}}
JSON
config=$(blob "$work/config.json")
cat >"$work/manifest.json" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config","size":$(size "$work/config.json")},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:$layer","size":$(size "$work/layer.tar")}]}
JSON
manifest=$(blob "$work/manifest.json")
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/image/oci-layout"
cat >"$work/image/index.json" <<JSON
{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$manifest","size":$(size "$work/manifest.json")}]}
JSON
mkdir -p "$(dirname "$out")"
tar -C "$work/image" -cf "$out" oci-layout index.json blobs
echo "$out"
