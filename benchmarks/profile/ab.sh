#!/bin/sh
# Two builds alternated (A, B, A, B ...) against the workspace's mock; medians of CPU s per 1M rows.
# Usage: benchmarks/profile/ab.sh BIN_A BIN_B [ROUNDS] [CSV]
set -eu
HERE=$(dirname "$(realpath "$0")")
A=$(realpath "$1"); B=$(realpath "$2"); N=${3:-5}; CSV=${4:-c300k.csv}
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
: >"$PROF/ab.out"
for _ in $(seq "$N"); do
    echo "A $("$HERE/send.sh" "$A" "$CSV")" | tee -a "$PROF/ab.out"
    echo "B $("$HERE/send.sh" "$B" "$CSV")" | tee -a "$PROF/ab.out"
done
python3 - "$PROF/ab.out" "$(($(wc -l <"$PROF/$CSV") - 1))" <<'PY'
import statistics, sys
rows = int(sys.argv[2]); cpu = {"A": [], "B": []}; rate = {"A": [], "B": []}
for line in open(sys.argv[1]):
    side, user, system, _, _, per_s = line.split()
    cpu[side].append((float(user) + float(system)) * 1e6 / rows); rate[side].append(float(per_s))
for side in "AB":
    print(f"{side}: CPU s per 1M rows {statistics.median(cpu[side]):.3f}, notifications/s {statistics.median(rate[side]):.0f}")
print(f"B / A CPU: {statistics.median(cpu['B']) / statistics.median(cpu['A']):.3f}")
PY
