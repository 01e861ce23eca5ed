#!/usr/bin/env bash
# Test images are tagged per checkout (test-<hash of its path>), so every clone that runs the tests
# adds a set of tags to the engine, and a set of images once its code differs. This removes the
# sets no checkout has built for a day: each build of a test tag stamps it
# ($DUTIL_CACHE/image-tags/<tag>, its time the last build), and a test tag whose stamp is older
# than DUTIL_TEST_TAG_DAYS (default 1) is untagged from every image. A tag found without a stamp
# (an engine filled before the stamps) is stamped now, so it goes a day later if unused. Layers no
# tag holds any more are freed by the engine; the build cache is kept apart and stays. The real
# node's image store follows the engine (test/real-node/real-node.ts, importDockerImages).
#
#   images/prune-test-tags.sh <current tag>     (against $DOCKER_HOST; never removes <current tag>)
set -euo pipefail

current=${1:?the tag being built}
docker=${DOCKER:-docker}
registry=${DUTIL_IMAGE_REGISTRY:-ghcr.io/dutil}
stamps=${DUTIL_CACHE:-$HOME/.cache/dutil}/image-tags
days=${DUTIL_TEST_TAG_DAYS:-1}
mkdir -p "$stamps"
touch "$stamps/$current"

refs=$("$docker" image ls --format '{{.Repository}}:{{.Tag}}' | grep -E "^$registry/dutil-[a-z0-9-]+:test-[0-9a-f]+\$" || true)
for tag in $(printf '%s\n' "$refs" | sed -n 's/.*:\(test-[0-9a-f]*\)$/\1/p' | sort -u); do
  [ "$tag" = "$current" ] && continue
  if [ ! -e "$stamps/$tag" ]; then
    touch "$stamps/$tag"
    continue
  fi
  [ -n "$(find "$stamps/$tag" -mtime "+$((days - 1))" -print)" ] || continue
  # shellcheck disable=SC2046 # one ref per word
  if "$docker" image rm $(printf '%s\n' "$refs" | grep -E ":$tag\$") >/dev/null 2>&1; then
    rm -f "$stamps/$tag"
    printf '[images] removed the test images tagged %s (no checkout built them for %s day(s))\n' "$tag" "$days" >&2
  fi
done
