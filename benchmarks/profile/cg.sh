#!/bin/sh
# `send` under callgrind (a copy of BIN without debug info: valgrind 3.19 cannot read Swift's DWARF 5).
# Prints the total instruction count. Per-row marginal: run with CSV=c30k.csv and CSV=c90k.csv,
# then (total90k - total30k) / 60000, which leaves the fixed start out.
# Usage: [CSV=c90k.csv] benchmarks/profile/cg.sh BIN TAG   -> $PROF_DIR/cg.TAG.CSV.out
set -eu
BIN=$(realpath "$1"); TAG=$2; CSV=${CSV:-c30k.csv}
PROF=${PROF_DIR:-/tmp/apns-bulk-prof}
cd "$PROF"
cp "$BIN" "bin.$TAG"; strip -g "bin.$TAG"; rm -rf "out.$TAG"
valgrind --tool=callgrind --callgrind-out-file="$PROF/cg.$TAG.$CSV.out" "$PROF/bin.$TAG" send --input "$CSV" \
    --endpoint "127.0.0.1:$(cat port)" --ca-file ca.pem --key-file key.p8 --key-id BENCHKEY01 --team-id BENCHTEAM1 \
    --topic com.example.bench --connections 4 --max-streams 200 --progress never --out "out.$TAG" >/dev/null 2>"cg.$TAG.err"
grep -h "^totals:\|^summary:" "$PROF/cg.$TAG.$CSV.out" | tail -1
