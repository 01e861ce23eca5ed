#!/usr/bin/env bash
# Installs what the platform needs and the machine lacks: Debian packages (Redis, qpdf,
# Chromium, LibreOffice, openssl) and the npm packages. Quick when everything is already there.
# With --bench also the native tools `make bench` compares against (Info-ZIP zip and unzip,
# GNU time); `make test` never needs them.
set -euo pipefail
cd "$(dirname "$0")/../.."

need=()
# With --node also what the real node runs on (containerd, runc, the CNI plugins, iptables for
# kube-proxy, ipset for the NetworkPolicy enforcer, htpasswd for its registry); `make test` asks for them too.
if [ "${1:-}" = "--node" ]; then
  command -v containerd >/dev/null || need+=(containerd)
  command -v runc >/dev/null || need+=(runc)
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
  command -v iptables >/dev/null || need+=(iptables)
  command -v ipset >/dev/null || need+=(ipset)
  # htpasswd (bcrypt) for the basic auth of the registry the node tier runs.
  command -v htpasswd >/dev/null || need+=(apache2-utils)
  # A Java runtime and Maven for veraPDF, the PDF/A and PDF/UA validator the tests run (below).
  command -v java >/dev/null || need+=(default-jre-headless)
  command -v mvn >/dev/null || need+=(maven)
fi
if [ "${1:-}" = "--bench" ]; then
  command -v zip >/dev/null || need+=(zip)
  command -v unzip >/dev/null || need+=(unzip)
  [ -x /usr/bin/time ] || need+=(time)
fi
command -v redis-server >/dev/null || need+=(redis-server)
command -v qpdf >/dev/null || need+=(qpdf)
# edit-pdf's rewrites (PDF/A, pictures shrunk): Ghostscript.
command -v gs >/dev/null || need+=(ghostscript)
command -v chromium >/dev/null || need+=(chromium)
# html-pdf's runner drives the headless-only build (the full browser stays for the console's browser tests).
command -v chromium-headless-shell >/dev/null || need+=(chromium-headless-shell)
# office-pdf's runner: LibreOffice headless (Writer, Calc, Impress) driven through Debian's
# python3-uno, and metric-compatible fonts so Word documents keep their layout (Carlito for
# Calibri, Caladea for Cambria, Liberation for Arial, Times New Roman and Courier New).
for p in libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno \
  fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation fonts-noto-core fonts-noto-cjk; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
# pdftotext, pdffonts and pdfinfo: the tests read the text, fonts and page size of PDFs made.
command -v pdftotext >/dev/null || need+=(poppler-utils)
command -v openssl >/dev/null || need+=(openssl)
command -v unshare >/dev/null || need+=(util-linux)
# The job record: Debian's PostgreSQL server (initdb and postgres under /usr/lib/postgresql/<v>/bin).
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  echo "[deps] installing Debian packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "[deps] Go is required to build the control plane (https://go.dev/dl/)"; exit 1; }

# schemathesis (from PyPI) fuzzes the running gateway against its own OpenAPI document.
cache=${DUTIL_CACHE:-$HOME/.cache/dutil}
st_version=4.32.5
if [ "$(cat "$cache/venv/.schemathesis" 2>/dev/null)" != "$st_version" ]; then
  echo "[deps] installing schemathesis $st_version into $cache/venv"
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$st_version"
  echo "$st_version" >"$cache/venv/.schemathesis"
fi

# veraPDF (Java, from Maven Central) for `make test` (--node): the tests validate every PDF/A and
# PDF/UA document made with it.
vera_sum=$(sha256sum test/platform/verapdf/pom.xml | cut -c1-16)
if [ "${1:-}" = "--node" ] && [ "$(cat "$cache/verapdf/.pom" 2>/dev/null)" != "$vera_sum" ]; then
  echo "[deps] fetching veraPDF into $cache/verapdf"
  rm -rf "$cache/verapdf"
  mvn -q -B -f test/platform/verapdf/pom.xml dependency:copy-dependencies -DoutputDirectory="$cache/verapdf/lib"
  echo "$vera_sum" >"$cache/verapdf/.pom"
fi

# The Python client's tools (generator, formatter, mypy, pytest, the wheel builder) in a virtual
# environment of their own, and its runtime dependencies as wheels, so that the test installing the
# built client into a fresh environment needs no network.
py_reqs=clients/python/requirements-dev.txt
py_sum=$(sha256sum "$py_reqs" | cut -c1-16)
if [ "$(cat "$cache/venv-client/.requirements" 2>/dev/null)" != "$py_sum" ]; then
  echo "[deps] installing the Python client's tools into $cache/venv-client"
  rm -rf "$cache/venv-client" "$cache/python-wheels"
  python3 -m venv "$cache/venv-client"
  "$cache/venv-client/bin/pip" install -q --disable-pip-version-check -r "$py_reqs"
  # The runtime dependencies at the versions the tools use (pyproject.toml gives their ranges).
  "$cache/venv-client/bin/pip" download -q --disable-pip-version-check -d "$cache/python-wheels" \
    $(grep -E '^(httpx|pydantic|standardwebhooks)==' "$py_reqs")
  echo "$py_sum" >"$cache/venv-client/.requirements"
fi

# Gotenberg's published clients, installed from their registries as their users install them
# (outside this repository), for the tests of dutil's Gotenberg routes.
gc_versions="chromiumly@6.0.0 gotenberg-client[httpx]==1.0.0"
if [ "$(cat "$cache/gotenberg-clients/.versions" 2>/dev/null)" != "$gc_versions" ]; then
  echo "[deps] installing Gotenberg's clients into $cache/gotenberg-clients"
  rm -rf "$cache/gotenberg-clients"
  mkdir -p "$cache/gotenberg-clients/node"
  (cd "$cache/gotenberg-clients/node" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error chromiumly@6.0.0)
  python3 -m venv "$cache/gotenberg-clients/venv"
  "$cache/gotenberg-clients/venv/bin/pip" install -q --disable-pip-version-check "gotenberg-client[httpx]==1.0.0"
  echo "$gc_versions" >"$cache/gotenberg-clients/.versions"
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] installing npm packages"
  # `npm install` keeps the locked versions; `npm ci` is not used because the lock files this
  # npm (11.x) writes list only this platform's optional packages, which `npm ci` then rejects.
  npm install --no-audit --no-fund --loglevel=error
fi
# The typed API client is its own package (clients/typescript): its generator and its lock.
if [ ! -f clients/typescript/node_modules/.package-lock.json ] || [ clients/typescript/package-lock.json -nt clients/typescript/node_modules/.package-lock.json ]; then
  echo "[deps] installing the TypeScript client's npm packages"
  npm --prefix clients/typescript install --no-audit --no-fund --loglevel=error
fi
