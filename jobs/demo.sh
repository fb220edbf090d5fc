#!/bin/sh
# make demo: a real 200,000-row campaign to the embedded mock APNs, with light faults.
# Usage: jobs/demo.sh BINARY OUTDIR
set -eu
bin=$1
out=$2
rows=${DEMO_ROWS:-200000}
rm -rf "$out"
mkdir -p "$out"
echo "== apns-bulk $("$bin" --version)"
echo "== apns-bulk gen --rows $rows (1% invalid rows, 2% unregistered tokens)"
"$bin" gen --rows "$rows" --out "$out/campaign.csv.zst" --invalid-rate 0.01 \
    --unregistered-rate 0.02 --unregistered-out "$out/unregistered.txt" --seed 42
echo "== apns-bulk send --config jobs/demo.toml --endpoint mock (GOAWAYs, 429s and 503s switched on)"
status=0
"$bin" send --config jobs/demo.toml --input "$out/campaign.csv.zst" --out "$out/run" \
    --mock-option "unregistered-file=$out/unregistered.txt" || status=$?
echo "== exit status $status (0: every row done; 3: some gave up; 2: aborted)"
echo "== the dead-token report (first lines of $out/run/dead-tokens.csv):"
head -4 "$out/run/dead-tokens.csv"
echo "== the result log decodes with the zstd CLI too:"
zstd -dc "$out/run/results.jsonl.zst" | head -2
echo "== the campaign's HTML report (open it in a browser: xdg-open, open, or file:// in the address bar):"
echo "$(cd "$out/run" && pwd)/report.html"
exit "$status"
