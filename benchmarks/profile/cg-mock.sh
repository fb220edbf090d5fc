#!/bin/sh
# The mock's instructions per request: one mock under callgrind (scenario 12's flags, as
# cg-broadcast.sh starts it), counters zeroed once it listens, dumped after CSV's device pushes
# and again after as many broadcasts (BCSV) from CLIENT (one client build for both mocks compared).
# Usage: [CSV=c30k.csv BCSV=b30k.csv] benchmarks/profile/cg-mock.sh MOCKBIN CLIENTBIN TAG
#   -> $PROF_DIR/mockcg.TAG.out.1 (device pushes), .2 (broadcasts); prints instructions per request.
# Per function: perrow.py mockcg.TAG.out.1 mockcg.TAG.out.2 30000 symbols (broadcast minus device).
set -eu
MOCK=$(realpath "$1"); CLIENT=$(realpath "$2"); TAG=$3
CSV=${CSV:-c30k.csv}; BCSV=${BCSV:-b30k.csv}
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
HERE=$(dirname "$(realpath "$0")")
cd "$PROF"
[ -f "$BCSV" ] || python3 -c "import sys; sys.path.insert(0, '$HERE/..'); import broadcast_bench, shutil; \
shutil.move(broadcast_bench.write_updates('$PROF', 30000), '$PROF/$BCSV')"
cp "$MOCK" "mockbin.$TAG"; strip -g "mockbin.$TAG"
rm -f "mockcg.$TAG.out"* "mockcg.$TAG.log"
taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$PROF/mockcg.$TAG.out" "$PROF/mockbin.$TAG" mock-server \
    --listen 127.0.0.1:0 --ca-out "$PROF/ca-cg.pem" --verify-key-file "$PROF/key.p8" \
    --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench --admit-any-channel \
    --initial-max-streams 200 --max-streams 200 >"mockcg.$TAG.log" 2>&1 &
VPID=$!
trap 'kill $VPID 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q listening "mockcg.$TAG.log" 2>/dev/null && break; sleep 0.2; done
PORT=$(grep -o 'listening 127.0.0.1:[0-9]*' "mockcg.$TAG.log" | cut -d: -f2)
callgrind_control -z $VPID >/dev/null
rm -rf "out.d.$TAG" "out.b.$TAG"
taskset -c 1 "$CLIENT" send --input "$CSV" --endpoint "127.0.0.1:$PORT" --ca-file ca-cg.pem --key-file key.p8 \
    --key-id BENCHKEY01 --team-id BENCHTEAM1 --topic com.example.bench --connections 4 --max-streams 200 \
    --progress never --out "out.d.$TAG" >/dev/null 2>"out.d.$TAG.err"
callgrind_control -d $VPID >/dev/null
taskset -c 1 "$CLIENT" broadcast --input "$BCSV" --bundle-id com.example.bench --endpoint "127.0.0.1:$PORT" \
    --ca-file ca-cg.pem --key-file key.p8 --key-id BENCHKEY01 --team-id BENCHTEAM1 --connections 4 --max-streams 200 \
    --progress never --out "out.b.$TAG" >/dev/null 2>"out.b.$TAG.err"
callgrind_control -d $VPID >/dev/null
kill $VPID; wait $VPID 2>/dev/null || true
for part in 1:d:device 2:b:broadcast; do
    dump=${part%%:*}; kind=${part##*:}; out=${part#*:}; out=out.${out%%:*}.$TAG
    rows=$(python3 -c "import json; print(json.load(open('$out/summary.json'))['delivered'])")
    total=$(grep -h "^totals:\|^summary:" "mockcg.$TAG.out.$dump" | tail -1 | cut -d' ' -f2)
    echo "$TAG $kind: $((total / rows)) instructions a request ($rows delivered)"
done
