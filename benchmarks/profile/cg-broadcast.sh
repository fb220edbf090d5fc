#!/bin/sh
# `broadcast` under callgrind, as cg.sh does `send`: BCSV rows of updates over 1,000 channels
# (scenario 12's campaign) to a second mock that admits any channel (started here on CPU 0 once).
# Per-row marginal: run with BCSV=b30k.csv and BCSV=b90k.csv, then perrow.py as for send.
# Usage: [BCSV=b90k.csv] benchmarks/profile/cg-broadcast.sh BIN TAG   -> $PROF_DIR/cg.TAG.BCSV.out
set -eu
BIN=$(realpath "$1"); TAG=$2; BCSV=${BCSV:-b30k.csv}
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
HERE=$(dirname "$(realpath "$0")")
cd "$PROF"
for n in 30000 90000; do
    [ -f "b$((n / 1000))k.csv" ] || python3 -c "import sys; sys.path.insert(0, '$HERE/..'); import broadcast_bench, shutil; \
shutil.move(broadcast_bench.write_updates('$PROF', $n), '$PROF/b$((n / 1000))k.csv')"
done
if ! { [ -f mock-bc.pid ] && kill -0 "$(cat mock-bc.pid)" 2>/dev/null; }; then
    rm -f mock-bc.out
    taskset -c 0 "$BIN" mock-server --listen 127.0.0.1:0 --ca-out "$PROF/ca-bc.pem" --verify-key-file "$PROF/key.p8" \
        --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench --admit-any-channel \
        --initial-max-streams 200 --max-streams 200 >mock-bc.out 2>&1 &
    echo $! >mock-bc.pid
    for _ in $(seq 50); do grep -q listening mock-bc.out 2>/dev/null && break; sleep 0.1; done
    grep -o 'listening 127.0.0.1:[0-9]*' mock-bc.out | cut -d: -f2 >port-bc
fi
cp "$BIN" "bin.$TAG"; strip -g "bin.$TAG"; rm -rf "out.$TAG"
valgrind --tool=callgrind --callgrind-out-file="$PROF/cg.$TAG.$BCSV.out" "$PROF/bin.$TAG" broadcast --input "$BCSV" \
    --bundle-id com.example.bench --endpoint "127.0.0.1:$(cat port-bc)" --ca-file ca-bc.pem --key-file key.p8 \
    --key-id BENCHKEY01 --team-id BENCHTEAM1 --connections 4 --max-streams 200 --progress never \
    --out "out.$TAG" >/dev/null 2>"cg.$TAG.err"
grep -h "^totals:\|^summary:" "$PROF/cg.$TAG.$BCSV.out" | tail -1
