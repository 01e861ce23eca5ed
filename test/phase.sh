# Sourced by test/run-tests.sh (and the commands it runs under the Docker engine):
# `phase NAME COMMAND...` runs the command and appends "NAME MILLISECONDS EXIT" to $PHASES_FILE.
phase() {
  local name=$1 t0 rc
  shift
  printf '\n[make test] phase %s\n' "$name"
  t0=$(date +%s%N)
  "$@"
  rc=$?
  printf '%s %s %s\n' "$name" $((($(date +%s%N) - t0) / 1000000)) "$rc" >>"$PHASES_FILE"
  return $rc
}
