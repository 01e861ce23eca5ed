#!/usr/bin/env bash
# Makes the upstream base images the Dockerfiles name available to the Docker engine at
# $DOCKER_HOST, under their upstream names:
#
#   debian:bookworm-slim                       (html-pdf runner's browser layer, node image below)
#   node:20-bookworm-slim                      (build stage; html-pdf runner)
#   gcr.io/distroless/nodejs20-debian12:nonroot  (gateway, operator and the other runners)
#
# An image already present is kept. Otherwise it is pulled, and when pulling fails (this machine
# reaches no container registry) it is provisioned locally from Debian packages instead:
# debootstrap makes a minimal bookworm root file system for debian:bookworm-slim, the
# machine's own Node.js 20 is added for node:20-bookworm-slim, and the distroless image is put
# together from the .deb packages distroless itself is made of (libc6, libgcc-s1, libstdc++6,
# base-files, netbase, tzdata, ca-certificates) plus that Node.js. Provisioned images are
# labelled dutil.provisioned=<how>, so they are never mistaken for the upstream ones.
#
# Needs root (debootstrap), Debian's package mirror, and node 20 on the machine.
set -euo pipefail

docker=${DOCKER:-docker}
log() { printf '[base-images] %s\n' "$*" >&2; }
have() { "$docker" image inspect "$1" >/dev/null 2>&1; }
pulled() { timeout 60 "$docker" pull -q "$1" >/dev/null 2>&1; }

work=$(mktemp -d /tmp/dutil-base-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

node_bin=$(command -v node || true)
node_major() { "$node_bin" -p 'process.versions.node.split(".")[0]'; }

provision_debian() {
  log "debian:bookworm-slim: debootstrap (minbase) from the Debian mirror"
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  local root=$work/debian
  debootstrap --variant=minbase --components=main bookworm "$root" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    log "debootstrap failed"
    exit 1
  }
  # As the upstream slim image: the three suites, no docs/man/locales, no apt caches.
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  find "$root/usr/share/doc" -mindepth 2 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$root/usr/share/man"/* "$root/usr/share/info"/* "$root/usr/share/locale"/* "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*.bin "$root/var/log"/*.log "$root/tmp"/*
  tar --numeric-owner -C "$root" -c . | "$docker" import \
    --change 'CMD ["bash"]' --change 'LABEL dutil.provisioned=debootstrap-bookworm-minbase' - debian:bookworm-slim >/dev/null
}

provision_node() {
  [ -n "$node_bin" ] && [ "$(node_major)" = 20 ] || { log "node:20-bookworm-slim needs Node.js 20 on this machine (found: ${node_bin:-none})"; exit 1; }
  local version npm_dir ctx=$work/node
  version=$("$node_bin" -p process.versions.node)
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  log "node:20-bookworm-slim: debian:bookworm-slim with this machine's Node.js $version and npm"
  mkdir -p "$ctx"
  cp "$(readlink -f "$node_bin")" "$ctx/node"
  cp -a "$npm_dir" "$ctx/npm"
  # The layout of the upstream image: node in /usr/local/bin, user node (1000).
  cat >"$ctx/Dockerfile" <<EOF
FROM debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node --version && npm --version
ENV NODE_VERSION=$version
LABEL dutil.provisioned=debian-bookworm-slim-plus-machine-node
CMD ["node"]
EOF
  "$docker" build -q --network=host -t node:20-bookworm-slim "$ctx" >/dev/null
}

provision_distroless() {
  [ -n "$node_bin" ] && [ "$(node_major)" = 20 ] || { log "the distroless nodejs20 image needs Node.js 20 on this machine"; exit 1; }
  log "gcr.io/distroless/nodejs20-debian12:nonroot: Debian packages (libc6 libgcc-s1 libstdc++6 base-files netbase tzdata ca-certificates) and this machine's Node.js"
  local root=$work/distroless debs=$work/debs
  mkdir -p "$root" "$debs"
  # (As root into a private directory: apt notes it cannot drop to its _apt user; the log says so.)
  (cd "$debs" && apt-get download -qq gcc-12-base libc6 libgcc-s1 libstdc++6 base-files netbase tzdata ca-certificates >"$work/apt-download.log" 2>&1) || {
    cat "$work/apt-download.log" >&2
    log "downloading the distroless packages failed"
    exit 1
  }
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
  # As distroless: the CA bundle (update-ca-certificates never runs there), the users root,
  # nobody and nonroot (65532), a sticky /tmp, no shell, no package manager, no docs.
  mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot" "$root/nodejs/bin"
  cat "$root"/usr/share/ca-certificates/mozilla/*.crt >"$root/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  chown 65532:65532 "$root/home/nonroot"
  rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian" "$root/etc/init.d" "$root/usr/sbin/tzconfig"
  rm -f "$root"/bin/* "$root"/usr/bin/* 2>/dev/null || true
  cp "$(readlink -f "$node_bin")" "$root/nodejs/bin/node"
  tar --numeric-owner -C "$root" -c . | "$docker" import \
    --change 'USER 65532:65532' --change 'WORKDIR /home/nonroot' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'ENTRYPOINT ["/nodejs/bin/node"]' --change 'LABEL dutil.provisioned=debian-packages-plus-machine-node' \
    - gcr.io/distroless/nodejs20-debian12:nonroot >/dev/null
  # The image runs: node answers, and there is no shell.
  "$docker" run --rm --network=none gcr.io/distroless/nodejs20-debian12:nonroot -e 'process.exit(process.getuid() === 65532 ? 0 : 1)'
}

ensure() { # image provisioner
  if have "$1"; then return 0; fi
  if pulled "$1"; then log "$1: pulled"; return 0; fi
  log "$1: cannot be pulled here; provisioning it locally"
  "$2"
}

ensure debian:bookworm-slim provision_debian
ensure node:20-bookworm-slim provision_node
ensure gcr.io/distroless/nodejs20-debian12:nonroot provision_distroless
