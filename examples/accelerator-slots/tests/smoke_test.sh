#!/usr/bin/env bash
# The plugin as a process on its real socket, driven by qrm-example-accel-client (a stand-in
# for qrm-host): one container's life, then a restart that must keep the allocation.
#
#   smoke_test.sh PLUGIN_BINARY CLIENT_BINARY
#
# The plugin runs on a fake 2-node machine (--numa-nodes 0-1) in a scratch directory; with no
# qrm.sock there it serves its socket and waits for a host, which is all the client needs.
set -euo pipefail

plugin=$1
client=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/accel-smoke-XXXXXXXX")
socket="$scratch/plugins/example.qrm.io_accel-slots.sock"
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  echo "--- plugin log:"
  cat "$scratch/plugin.log"
  exit 1
}

start_plugin() {
  "$plugin" --plugin-dir "$scratch/plugins" --state-dir "$scratch/state" \
    --numa-nodes 0-1 --slots-per-node 4 >>"$scratch/plugin.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    [[ -S $socket ]] && return 0
    kill -0 "$pid" 2>/dev/null || fail "the plugin exited before serving"
    sleep 0.1
  done
  fail "no socket $socket after 10 s"
}

stop_plugin() {
  kill -TERM "$pid"
  local status=0
  wait "$pid" || status=$?
  pid=""
  [[ $status -eq 0 ]] || fail "the plugin exited with $status after SIGTERM"
  [[ ! -e $socket ]] || fail "the plugin left its socket behind"
}

# expect DESCRIPTION EXPECTED COMMAND...: runs the client, compares its whole output.
expect() {
  local description=$1 expected=$2
  shift 2
  local got
  got=$("$client" --socket "$socket" "$@" 2>&1) || fail "$description: client failed: $got"
  [[ $got == "$expected" ]] || fail "$description: expected [$expected], got [$got]"
  echo "ok: $description"
}

start_plugin
expect "options" "with_topology_alignment=1 need_reconcile=0 pre_start_required=0" options
expect "3 slots fit on node 0" \
  "example.qrm.io/accel-slots node0:3 ACCEL_NUMA_NODES=0 ACCEL_SLOTS=3" allocate p1 main 3
expect "node 0 is too full for 3 more: node 1" \
  "example.qrm.io/accel-slots node1:3 ACCEL_NUMA_NODES=1 ACCEL_SLOTS=3" allocate p2 main 3
expect "allocate is idempotent" \
  "example.qrm.io/accel-slots node0:3 ACCEL_NUMA_NODES=0 ACCEL_SLOTS=3" allocate p1 main 3
expect "zero slots: no entry at all" "" allocate p3 main 0
expect "capacity, allocatable (all of it) and what is held" \
  "capacity=8 allocatable=8 allocated=6" allocatable
if got=$("$client" --socket "$socket" allocate p4 main 3 2>&1); then
  fail "3 slots with 2 free were granted: $got"
fi
[[ $got == *"no hint fits 3"* ]] || fail "a request that does not fit: unexpected [$got]"
echo "ok: a request that does not fit is refused"

stop_plugin
[[ -f $scratch/state/accel-slots.json ]] || fail "no state file in --state-dir"
[[ -z $(ls "$scratch/plugins") ]] || fail "the plugin directory holds more than sockets"
start_plugin
expect "a restart keeps every allocation" \
  "p1/main example.qrm.io/accel-slots node0:3
p2/main example.qrm.io/accel-slots node1:3" list
expect "RemovePod releases" "" remove p1
expect "RemovePod of an unknown pod succeeds" "" remove never-seen
expect "what is left" "p2/main example.qrm.io/accel-slots node1:3" list
expect "the released slots are free again" "capacity=8 allocatable=8 allocated=3" allocatable
stop_plugin
echo "smoke test passed"
