#!/usr/bin/env bash
# `make release`: what a platform team mirrors into its own registry, in one folder
# (DUTIL_RELEASE_DIR, default dist/release/<version>):
#
#   dutil-<version>.tgz                  the Helm chart (`helm package`), for `helm push` to an OCI registry
#   dutil-<image>-<version>.oci.tar      every image as an OCI image layout archive (`docker save`,
#                                        converted by skopeo, from Debian): `skopeo copy oci-archive:…`,
#                                        `crane push`, `oras`, or `docker load` of a Docker 25+ engine take it
#   SHA256SUMS                           the checksums of all of them (`sha256sum -c SHA256SUMS`)
#
# Builds the images first (images/build-images.sh, from the layer cache when nothing changed).
# docs/install.md tells how to mirror and install them.
set -euo pipefail
cd "$(dirname "$0")/.."

docker=${DOCKER:-docker}
registry=${DUTIL_IMAGE_REGISTRY:-ghcr.io/dutil}
version=$(node -p 'require("./package.json").version')
chart_version=$(sed -n 's/^version: *//p' charts/dutil/Chart.yaml)
out=${DUTIL_RELEASE_DIR:-dist/release/$version}
helm=${DUTIL_CACHE:-$HOME/.cache/dutil}/bin/helm
log() { printf '[release] %s\n' "$*" >&2; }
command -v skopeo >/dev/null || {
  log 'installing skopeo (Debian) to write OCI archives'
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends skopeo >/dev/null
}

DUTIL_IMAGE_TAG=$version images/build-images.sh
rm -rf "$out"
mkdir -p "$out"
"$helm" package charts/dutil --destination "$out" >/dev/null
log "chart: $out/dutil-$chart_version.tgz"
for ref in $("$docker" images --format '{{.Repository}}:{{.Tag}}' "$registry/dutil-*" | grep ":$version\$" | sort); do
  name=${ref#"$registry/"}
  name=${name%%:*}
  case $name in *-browser) continue ;; esac
  "$docker" save -o "$out/.docker-archive.tar" "$ref"
  skopeo copy --quiet "docker-archive:$out/.docker-archive.tar" "oci-archive:$out/$name-$version.oci.tar:$ref"
  rm -f "$out/.docker-archive.tar"
  log "image: $ref -> $out/$name-$version.oci.tar"
done
(cd "$out" && sha256sum -- *.tgz *.oci.tar >SHA256SUMS)
log "$(wc -l <"$out/SHA256SUMS") files and their SHA-256 sums in $out"
