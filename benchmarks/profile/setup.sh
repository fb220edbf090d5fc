#!/bin/sh
# Prepares a profiling workspace and starts a mock server for it (see README.md here).
# Usage: benchmarks/profile/setup.sh [BIN]   (BIN defaults to .build/release/apns-bulk)
set -eu
BIN=$(realpath "${1:-.build/release/apns-bulk}")
HERE=$(cd "$(dirname "$0")" && pwd)
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
mkdir -p "$PROF"
cd "$PROF"
[ -f key.p8 ] || openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out key.p8 2>/dev/null
for n in 30000 90000 300000; do
    [ -f "c$((n / 1000))k.csv" ] || "$BIN" gen --rows "$n" --out "c$((n / 1000))k.csv" --payload-bytes 200 --seed 7 >/dev/null
done
# Live Activity rows and alert rows of their shape (la-rows.py): the rules' per-row cost.
for n in 30000 90000; do
    [ -f "la$((n / 1000))k.csv" ] || "$HERE/la-rows.py" "$n" "la$((n / 1000))k.csv" "pa$((n / 1000))k.csv"
done
if [ -f mock.pid ] && kill -0 "$(cat mock.pid)" 2>/dev/null; then
    echo "mock already running (pid $(cat mock.pid), port $(cat port))"
    exit 0
fi
rm -f mock.out
taskset -c 0 "$BIN" mock-server --listen 127.0.0.1:0 --ca-out "$PROF/ca.pem" --verify-key-file "$PROF/key.p8" \
    --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench \
    --initial-max-streams 200 --max-streams 200 >mock.out 2>&1 &
echo $! >mock.pid
for _ in $(seq 50); do grep -q listening mock.out 2>/dev/null && break; sleep 0.1; done
grep -o 'listening 127.0.0.1:[0-9]*' mock.out | cut -d: -f2 >port
echo "mock pid $(cat mock.pid) on port $(cat port); stop it with: kill \$(cat $PROF/mock.pid)"
