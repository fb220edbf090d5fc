#!/usr/bin/env bash
# Runs a command while busy loops take the machine's cores, as other builds do on a shared CI
# machine: `tools/under-load.sh N COMMAND...` (N loops, default `nproc`). The loops stop when the
# command ends (its exit status is this script's), on a signal, and in any case after
# LOAD_SECONDS (default 3600), so none outlives a killed run for long.
set -uo pipefail
loops=${1:?usage: under-load.sh LOOPS COMMAND...}; shift
[ "$loops" -gt 0 ] 2>/dev/null || loops=$(nproc)
pids=()
stop_loops() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; pids=(); }
trap 'stop_loops; exit 130' INT TERM
trap stop_loops EXIT
for _ in $(seq "$loops"); do
  timeout "${LOAD_SECONDS:-3600}" sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "under-load: $loops busy loops (pids ${pids[*]}) while: $*" >&2
"$@"
status=$?
stop_loops
echo "under-load: done, exit $status; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
exit $status
