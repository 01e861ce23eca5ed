#!/usr/bin/env bash
# Generates the local control plane's PKI into DIR (idempotent: existing files are kept
# until they are within a day of expiring). One CA signs the API server's serving cert and
# the admin client cert (O=system:masters); a separate key pair signs service-account tokens.
set -euo pipefail
dir=$1
# Extra addresses the API server answers at (the real node's address, test/real-node).
extra_ips=""
for ip in "${@:2}"; do extra_ips+=",IP:$ip"; done
mkdir -p "$dir"
cd "$dir"

fresh() { [ -f "$1" ] && openssl x509 -checkend 86400 -noout -in "$1" >/dev/null 2>&1; }

if ! fresh ca.crt; then
  rm -f ./*.crt ./*.key ./*.csr
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=dutil-local-ca" \
    -keyout ca.key -out ca.crt 2>/dev/null
fi

issue() { # name subject extfile-content
  local name=$1 subj=$2 ext=$3
  fresh "$name.crt" && return 0
  openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$name.key" -out "$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 365 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

# A serving cert without an address asked for now is issued again.
if [ -f apiserver.crt ] && [ -n "$extra_ips" ]; then
  sans=$(openssl x509 -in apiserver.crt -noout -ext subjectAltName 2>/dev/null || true)
  for ip in "${@:2}"; do grep -q "IP Address:$ip\b" <<<"$sans" || rm -f apiserver.crt; done
fi
issue apiserver "/CN=kube-apiserver" "subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1$extra_ips
extendedKeyUsage=serverAuth
keyUsage=digitalSignature,keyEncipherment"
issue admin "/O=system:masters/CN=dutil-admin" "extendedKeyUsage=clientAuth
keyUsage=digitalSignature,keyEncipherment"

[ -f sa.key ] || openssl genrsa -out sa.key 2048 2>/dev/null
[ -f sa.pub ] || openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
