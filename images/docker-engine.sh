#!/usr/bin/env bash
# Runs a command with a Docker engine at hand:
#
#   images/docker-engine.sh run <command> [args...]
#
# The command gets DOCKER_HOST and DOCKER (the client to call). An engine that already answers
# (DOCKER_HOST, or /var/run/docker.sock) is used as it is. Otherwise Debian's docker.io is
# installed when missing and its dockerd is started here, on a private socket with its data in
# $DUTIL_CACHE/docker (images stay cached between runs), without a bridge or iptables rules
# (builds and containers use the host network). Concurrent callers share that engine; the last
# one to finish stops it, so nothing is left running.
set -euo pipefail

[ "${1:-}" = run ] && [ $# -ge 2 ] || { echo "usage: $0 run <command> [args...]" >&2; exit 2; }
shift

cache=${DUTIL_CACHE:-$HOME/.cache/dutil}
run=/run/dutil-docker
sock=unix://$run/docker.sock
log() { printf '[docker-engine] %s\n' "$*" >&2; }

# Debian's client matches Debian's engine (API 1.41, BuildKit built in); a newer client on PATH
# would ask for a buildx plugin this machine does not have.
client() { if [ -x /usr/bin/docker ]; then echo /usr/bin/docker; else command -v docker; fi; }

answers() { DOCKER_HOST=$1 timeout 10 "$(client)" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

if [ -n "${DOCKER_HOST:-}" ] && answers "$DOCKER_HOST"; then
  export DOCKER="$(client)"
  exec "$@"
fi
if [ -S /var/run/docker.sock ] && answers unix:///var/run/docker.sock; then
  export DOCKER_HOST=unix:///var/run/docker.sock DOCKER="$(client)"
  exec "$@"
fi

if ! command -v dockerd >/dev/null; then
  log "installing Debian's docker.io"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends docker.io >/dev/null
fi
[ "$(id -u)" = 0 ] || { log "starting dockerd needs root"; exit 1; }

mkdir -p "$run/users" "$cache/docker"
exec 9>"$run/lock"

# Under the lock: drop users that are gone, register this one, start the engine if it is down.
flock 9
for f in "$run"/users/*; do [ -e "$f" ] && ! kill -0 "$(basename "$f")" 2>/dev/null && rm -f "$f"; done
touch "$run/users/$$"
if ! answers "$sock"; then
  log "starting dockerd (data in $cache/docker, log in $run/dockerd.log)"
  setsid dockerd --host "$sock" --data-root "$cache/docker" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
    --bridge=none --iptables=false --ip6tables=false --ip-masq=false >"$run/dockerd.log" 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 120); do answers "$sock" && break; sleep 0.5; done
  if ! answers "$sock"; then
    log "dockerd did not start; its log ends with:"
    tail -n 20 "$run/dockerd.log" >&2
    rm -f "$run/users/$$"
    exit 1
  fi
fi
flock -u 9

stop_if_last() {
  flock 9
  rm -f "$run/users/$$"
  for f in "$run"/users/*; do [ -e "$f" ] && ! kill -0 "$(basename "$f")" 2>/dev/null && rm -f "$f"; done
  if [ -z "$(ls -A "$run/users")" ] && [ -f "$run/dockerd.pid" ]; then
    pid=$(cat "$run/dockerd.pid")
    log "stopping dockerd ($pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  flock -u 9
}
trap stop_if_last EXIT
trap 'exit 130' INT TERM

export DOCKER_HOST=$sock DOCKER="$(client)"
"$@" 9>&-
