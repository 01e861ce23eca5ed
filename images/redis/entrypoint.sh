#!/bin/sh
# Starts redis-server with the password from REDIS_PASSWORD (through a config file in /tmp, so it
# is not on the command line), its append-only file in /data (the volume).
set -eu
: "${REDIS_PASSWORD:?REDIS_PASSWORD is required}"
conf=/tmp/redis.conf
umask 077
cat >"$conf" <<CONF
port 6379
bind * -::*
protected-mode no
dir /data
appendonly yes
save ""
requirepass $REDIS_PASSWORD
CONF
exec redis-server "$conf"
