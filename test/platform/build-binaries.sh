#!/usr/bin/env bash
# Builds the platform's Go binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, MinIO, Helm, promtool for the chart's alerts, helm-docs for its README,
# seccomp-profile for its Chromium sandbox profile, Jaeger for the tracing tests; MinIO's client mc for
# `make bench`; kubelet, kube-proxy, CoreDNS and kube-router for the real node; KWOK for
# `make bench-nodes`) from the Go module proxy into a cache outside git.
# Each binary is rebuilt only when its pinned version changes, so a warm run takes a second.
#
#   test/platform/build-binaries.sh [name ...]     (default: all)
#
# Output: $DUTIL_CACHE/bin/<name> (DUTIL_CACHE defaults to ~/.cache/dutil).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

cache=${DUTIL_CACHE:-$HOME/.cache/dutil}
bin="$cache/bin"
mkdir -p "$bin"
export CGO_ENABLED=0 GOFLAGS=-mod=mod
# Two cores: one package at a time keeps peak memory of the Kubernetes link steps bounded.
export GOMAXPROCS=${GOMAXPROCS:-2}

stamp_ok() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.version" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" >"$bin/.$1.version"; }
log() { printf '[build-binaries] %s\n' "$*" >&2; }
# Runs a build step with its output in a log file, shown only when the step fails.
quiet() {
  local name=$1; shift
  if ! "$@" >"$bin/.$name.build.log" 2>&1; then
    tail -n 40 "$bin/.$name.build.log" >&2
    log "building $name failed (full log: $bin/.$name.build.log)"
    exit 1
  fi
}

k8s_ldflags() {
  local v=$K8S_VERSION minor
  minor=${v#v1.}; minor=${minor%%.*}
  local p
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
      "$p" "$v" "$p" "$p" "$minor" "$p"
  done
  printf -- '-s -w'
}

build_k8s() {
  local name=$1
  stamp_ok "$name" "$K8S_VERSION" && return 0
  log "building $name $K8S_VERSION (cold: several minutes)"
  quiet "$name" bash -c 'cd "$1" && go build -trimpath -ldflags "$2" -o "$3" "k8s.io/kubernetes/cmd/$4"' _ "$here/tools/kubernetes" "$(k8s_ldflags)" "$bin/$name.tmp" "$name"
  mv "$bin/$name.tmp" "$bin/$name"
  stamp "$name" "$K8S_VERSION"
}

build_etcd() {
  stamp_ok etcd "$ETCD_VERSION" && return 0
  log "building etcd $ETCD_VERSION"
  quiet etcd bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" go.etcd.io/etcd/server/v3' _ "$here/tools/etcd" "$bin/etcd.tmp"
  mv "$bin/etcd.tmp" "$bin/etcd"
  stamp etcd "$ETCD_VERSION"
}

build_kube_router() {
  stamp_ok kube-router "$KUBE_ROUTER_VERSION" && return 0
  log "building kube-router $KUBE_ROUTER_VERSION"
  quiet kube-router bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" github.com/cloudnativelabs/kube-router/cmd/kube-router' _ "$here/tools/kube-router" "$bin/kube-router.tmp"
  mv "$bin/kube-router.tmp" "$bin/kube-router"
  stamp kube-router "$KUBE_ROUTER_VERSION"
}

build_kwok() {
  stamp_ok kwok "$KWOK_VERSION" && return 0
  log "building kwok $KWOK_VERSION"
  quiet kwok bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" sigs.k8s.io/kwok/cmd/kwok' _ "$here/tools/kwok" "$bin/kwok.tmp"
  mv "$bin/kwok.tmp" "$bin/kwok"
  stamp kwok "$KWOK_VERSION"
}

build_jaeger() {
  stamp_ok jaeger "$JAEGER_VERSION" && return 0
  log "building jaeger $JAEGER_VERSION"
  quiet jaeger bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" github.com/jaegertracing/jaeger/cmd/jaeger' _ "$here/tools/jaeger" "$bin/jaeger.tmp"
  mv "$bin/jaeger.tmp" "$bin/jaeger"
  stamp jaeger "$JAEGER_VERSION"
}

# The chart's seccomp profile for Chromium's sandbox (charts/dutil/files), from containerd's
# default profile: a program of ours, rebuilt when its source or pinned modules change.
build_seccomp_profile() {
  local dir="$here/tools/seccomp-profile" id
  id=$(cat "$dir/go.mod" "$dir/go.sum" "$dir/main.go" | sha256sum | cut -c1-16)
  stamp_ok seccomp-profile "$id" && return 0
  log "building seccomp-profile"
  quiet seccomp-profile bash -c 'cd "$1" && go build -trimpath -ldflags "-s -w" -o "$2" .' _ "$dir" "$bin/seccomp-profile.tmp"
  mv "$bin/seccomp-profile.tmp" "$bin/seccomp-profile"
  stamp seccomp-profile "$id"
}

go_install() { # name module@version [extra ldflags] [build tags]
  local name=$1 mod=$2 ldflags="-s -w ${3:-}" tags=${4:-} id="$2${3:+ $3}${4:+ tags $4}"
  stamp_ok "$name" "$id" && return 0
  log "building $name from $mod"
  quiet "$name" env GOBIN="$bin/.gobin" go install -trimpath -tags "$tags" -ldflags "$ldflags" "$mod"
  mv "$bin/.gobin/$name" "$bin/$name"
  stamp "$name" "$id"
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl minio helm promtool helm-docs jaeger seccomp-profile)
for name in "${want[@]}"; do
  case $name in
    etcd) build_etcd ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|kube-proxy) build_k8s "$name" ;;
    coredns) go_install coredns "github.com/coredns/coredns@$COREDNS_VERSION" ;;
    kube-router) build_kube_router ;;
    jaeger) build_jaeger ;;
    kwok) build_kwok ;;
    seccomp-profile) build_seccomp_profile ;;
    minio) go_install minio "github.com/minio/minio@$MINIO_VERSION" ;;
    registry) go_install registry "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION" ;;
    mc) go_install mc "github.com/minio/mc@$MC_VERSION" ;;
    # Only `check rules` and `test rules` are used: without the service discoveries (cloud SDKs)
    # a cold build takes 95 s instead of 230 s.
    promtool) go_install promtool "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION" "" remove_all_sd ;;
    helm-docs) go_install helm-docs "github.com/norwoodj/helm-docs/cmd/helm-docs@$HELM_DOCS_VERSION" ;;
    # Stamped like Helm's own release build, so `helm version` names the pinned release.
    helm) go_install helm "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.gitTreeState=clean" ;;
    *) log "unknown binary $name"; exit 2 ;;
  esac
done
