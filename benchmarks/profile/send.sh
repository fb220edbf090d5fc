#!/bin/sh
# One `send` of a workspace CSV on CPU 1; prints user s, sys s, wall s, peak RSS KiB, notifications/s.
# Usage: benchmarks/profile/send.sh BIN CSV [extra send flags]
set -eu
BIN=$(realpath "$1"); CSV=$2; shift 2
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
cd "$PROF"
rm -rf out
/usr/bin/time -f "%U %S %e %M" -o time.txt taskset -c 1 "$BIN" send --input "$CSV" --endpoint "127.0.0.1:$(cat port)" \
    --ca-file ca.pem --key-file key.p8 --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench \
    --connections 4 --max-streams 200 --progress never --out out "$@" >/dev/null 2>send.err || { cat send.err; exit 1; }
echo "$(cat time.txt) $(python3 -c 'import json; print(json.load(open("out/summary.json"))["notifications_per_s"])')"
