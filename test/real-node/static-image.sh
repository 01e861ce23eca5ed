#!/usr/bin/env bash
# Packs one static binary as an OCI image layout tar that `ctr images import` takes: one layer
# holding /<name>, that binary as the entrypoint, run as USER. No registry is reachable here, so
# the images the real node needs besides ours (the pod sandbox, CoreDNS) are made this way.
#
#   test/real-node/static-image.sh OUT.tar BINARY [USER]      (USER defaults to 65535:65535)
set -euo pipefail
out=$(realpath -m "$1")
binary=$(realpath "$2")
user=${3:-65535:65535}
name=$(basename "$binary")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/rootfs" "$work/image/blobs/sha256"
cp "$binary" "$work/rootfs/$name"
# A reproducible layer: fixed owner, mode and time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00Z' -C "$work/rootfs" -cf "$work/layer.tar" "$name"

blob() { # file -> prints sha256 digest, stores the blob
  local digest
  digest=$(sha256sum "$1" | cut -d' ' -f1)
  cp "$1" "$work/image/blobs/sha256/$digest"
  echo "$digest"
}
size() { stat -c %s "$1"; }

layer=$(blob "$work/layer.tar")
cat >"$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/$name"],"User":"$user"},"rootfs":{"type":"layers","diff_ids":["sha256:$layer"]}}
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
