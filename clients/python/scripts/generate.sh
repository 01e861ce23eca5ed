#!/usr/bin/env bash
# Regenerates src/dutil_client/_models.py from docs/openapi.yaml (part of `npm run generate`), with the
# tools `make deps` installs under the build cache.
set -euo pipefail
python="${DUTIL_CACHE:-$HOME/.cache/dutil}/venv-client/bin/python"
[ -x "$python" ] || { echo "no $python: run make deps first" >&2; exit 1; }
exec "$python" "$(dirname "$0")/generate.py" "$@"
