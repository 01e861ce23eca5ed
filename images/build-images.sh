#!/usr/bin/env bash
# Builds every dutil image: dutil-gateway, dutil-operator and dutil-runner-<utility> for each
# utility in the catalog whose runner program exists (runners/<utility>/main.ts), tagged
# <registry>/dutil-<name>:<tag> as the Helm chart names them. Runs against $DOCKER_HOST;
# `make images` runs it through images/docker-engine.sh, which provides an engine.
#
#   DUTIL_IMAGE_REGISTRY  default ghcr.io/dutil
#   DUTIL_IMAGE_TAG       default the version in package.json (the chart's appVersion)
#   DUTIL_BUILD_CA_BUNDLE extra CAs for npm inside the build (a TLS-inspecting proxy); default
#                         the machine's bundle, passed as a BuildKit secret (never in a layer)
#
# Layers are cached in the engine: a second run with unchanged sources takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

docker=${DOCKER:-docker}
registry=${DUTIL_IMAGE_REGISTRY:-ghcr.io/dutil}
tag=${DUTIL_IMAGE_TAG:-$(node -p 'require("./package.json").version')}
logs=${DUTIL_CACHE:-$HOME/.cache/dutil}/image-logs
mkdir -p "$logs"
log() { printf '[images] %s\n' "$*" >&2; }
export DOCKER_BUILDKIT=1

started=$(date +%s)
images/base/provision-base-images.sh

secret=()
ca=${DUTIL_BUILD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$ca" ] && secret=(--secret "id=ca_bundle,src=$ca")

build_in() { # context name dockerfile [docker build args...]
  local context=$1 name=$2 file=$3 t0
  shift 3
  t0=$(date +%s)
  if ! "$docker" build --network=host --progress=plain "${secret[@]}" -f "$file" -t "$registry/$name:$tag" "$@" "$context" >"$logs/$name.log" 2>&1; then
    tail -n 40 "$logs/$name.log" >&2
    log "building $name failed (full log: $logs/$name.log)"
    exit 1
  fi
  log "$registry/$name:$tag ($(($(date +%s) - t0)) s)"
}
build() { build_in . "$@"; } # name dockerfile [docker build args...], from the repository root

build dutil-gateway images/gateway/Dockerfile
build dutil-operator images/operator/Dockerfile
for dir in runners/*/; do
  slug=$(basename "$dir")
  [ -f "$dir/utility.ts" ] || continue
  # A runner that runs in another utility's image (html-image in html-pdf's) has none of its own.
  grep -q "image: 'dutil-runner-$slug'" "$dir/utility.ts" || {
    log "runners/$slug runs in another utility's image"
    continue
  }
  file=images/runner/Dockerfile
  args=(--build-arg "UTILITY=$slug")
  # A runner with system packages of its own (Chromium, LibreOffice) has its own Dockerfile.
  if [ -f "images/runner-$slug/Dockerfile" ]; then file=images/runner-$slug/Dockerfile; args=(); fi
  if [ -f "$dir/main.ts" ]; then
    build "dutil-runner-$slug" "$file" "${args[@]}"
  elif [ "$slug" = html-pdf ]; then
    # No program yet on this branch: build and keep the browser layer (Chromium and fonts), so
    # the heavy part is proven and cached; the image itself follows its runner.
    log "runners/html-pdf/main.ts is not here yet: building only the browser stage of dutil-runner-html-pdf"
    build dutil-runner-html-pdf-browser "$file" --target browser
  else
    log "runners/$slug/main.ts is not here yet: no dutil-runner-$slug image"
  fi
done
# The chart's internal services (storage/database/redis.type: internal): PostgreSQL and Redis
# from Debian, MinIO from its Go module (the binary test/platform/build-binaries.sh makes).
build dutil-postgresql images/postgresql/Dockerfile
build dutil-redis images/redis/Dockerfile
bin=${DUTIL_CACHE:-$HOME/.cache/dutil}/bin
[ -x "$bin/minio" ] || test/platform/build-binaries.sh minio
minio_ctx=$(mktemp -d /tmp/dutil-minio-image.XXXXXX)
trap 'rm -rf "$minio_ctx"' EXIT
cp "$bin/minio" "$minio_ctx/minio"
build_in "$minio_ctx" dutil-minio images/minio/Dockerfile
# Test tags no checkout has built for a day go (images/prune-test-tags.sh); images a rebuild
# untagged are garbage (the build cache is kept apart and stays).
case $tag in test-*) images/prune-test-tags.sh "$tag" ;; esac
"$docker" image prune -f >/dev/null
log "done in $(($(date +%s) - started)) s"
