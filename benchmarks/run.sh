#!/bin/sh
# make bench: the throughput harness (see benchmarks/bench.py for the knobs).
set -eu
cd "$(dirname "$0")"
exec python3 bench.py "$@"
