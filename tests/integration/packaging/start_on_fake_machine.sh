#!/usr/bin/env bash
# A plugin starts with an example configuration on the design document's machine.
#
#   start_on_fake_machine.sh FAKE_MACHINE_BINARY PLUGIN_BINARY CONFIG
#
# --print-config only proves that every key is known; the plugin reads some values (the role
# table, reserved CPUs, the NIC allowlist) only when it starts. This writes the document's
# 80-CPU, two-node machine (qrm-fake-machine --shape doc80), starts the plugin on it with
# CONFIG (its own sockets and state in a scratch directory, not registering with a host),
# waits for its socket, and stops it with SIGTERM, expecting exit code 0.
set -euo pipefail

fake_machine=$1
plugin=$2
config=$3
name=$(basename "$plugin")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/qrm-start-XXXXXXXX")
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

"$fake_machine" --shape doc80 --out "$scratch/machine" >/dev/null
mkdir -p "$scratch/plugins"

# The configuration's own paths point at /var/lib/qrm and the real machine: the command line
# wins over the file, so these flags move everything into the scratch directory.
"$plugin" --config "$config" \
  --sysfs-root "$scratch/machine/sys" --procfs-root "$scratch/machine/proc" \
  --netns-dir "$scratch/machine/netns" \
  --plugin-dir "$scratch/plugins" --state-dir "$scratch/state" --no-register \
  >"$scratch/log" 2>&1 &
pid=$!

# Serving means the configuration was accepted in full (a bad value exits with code 2).
for _ in $(seq 100); do
  if compgen -G "$scratch/plugins/*.sock" >/dev/null; then break; fi
  if ! kill -0 "$pid" 2>/dev/null; then
    status=0
    wait "$pid" || status=$?
    pid=""
    echo "$name exited with code $status before serving, with $config:"
    cat "$scratch/log"
    exit 1
  fi
  sleep 0.1
done
if ! compgen -G "$scratch/plugins/*.sock" >/dev/null; then
  echo "$name did not create its socket within 10 s, with $config:"
  cat "$scratch/log"
  exit 1
fi

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=""
if [[ $status -ne 0 ]]; then
  echo "$name exited with code $status after SIGTERM:"
  cat "$scratch/log"
  exit 1
fi
echo "$name served $(basename "$scratch"/plugins/*.sock) on doc80 with $config and stopped cleanly"
