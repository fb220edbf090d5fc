#!/bin/sh
# make demo: shows the main job as far as it exists today.
# Usage: jobs/demo.sh BINARY OUTDIR
set -eu
bin=$1
out=$2
mkdir -p "$out"
echo "== apns-bulk $("$bin" --version)"
echo "== a fresh P-256 signing key (the kind Apple's .p8 files hold): $out/AuthKey_DEMO123456.p8"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$out/AuthKey_DEMO123456.p8" 2>/dev/null
echo "== apns-bulk token --key-file $out/AuthKey_DEMO123456.p8 --key-id DEMO123456 --team-id TEAM123456"
"$bin" token --key-file "$out/AuthKey_DEMO123456.p8" --key-id DEMO123456 --team-id TEAM123456
