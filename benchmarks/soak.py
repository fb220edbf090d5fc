#!/usr/bin/env python3
"""make soak: a long campaign through two mock APNs servers with every fault switched on.

Sends SOAK_ROWS (default 10,000,000) rows from a generated .csv.zst through `send` against two
`mock-server`s on 127.0.0.1: one ends every connection with GOAWAY after a few thousand streams,
the other resets the TCP connection; both answer some 429s and 500/503s and add latency jitter.
It runs the same campaign at SOAK_SMALL_ROWS (default 1,000,000) first, for the memory
comparison. Checks, and exits 1 when one fails:

- rows == sum of outcomes in summary.json, and each row exactly once in results.jsonl.zst;
- zero device tokens answered 200 twice by the GOAWAY server (a graceful end loses no answer);
- every token answered 200 more than once anywhere belongs to a row whose record says
  retried_after_connection_loss (only answers truly lost with a reset connection are resent);
- send's peak RSS at most 64 MiB and less than 10 % above the small run's.

Needs the release binary (make soak builds it), /usr/bin/time, zstd, openssl. Everything runs on
127.0.0.1, in a temporary directory removed at the end (SOAK_KEEP=1 keeps it).
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, ".build", "release", "apns-bulk")
ROWS = int(os.environ.get("SOAK_ROWS", "10000000"))
SMALL_ROWS = int(os.environ.get("SOAK_SMALL_ROWS", "1000000"))
RSS_LIMIT_KIB = 64 * 1024
KEY_ID, TEAM_ID, TOPIC = "KEYID12345", "TEAM123456", "com.example.app"
FAULTS = ["--fail", "500:0.0005,503:0.0005", "--too-many-requests", "0.0005",
          "--latency-ms", "1", "--latency-jitter-ms", "4", "--max-streams", "500"]


def log(message):
    print(f"soak: {message}", file=sys.stderr, flush=True)


class Mock:
    def __init__(self, work, name, key, extra):
        self.ca = os.path.join(work, f"{name}-ca.pem")
        self.record = os.path.join(work, f"{name}-record.jsonl.zst")
        self.process = subprocess.Popen(
            [BIN, "mock-server", "--listen", "127.0.0.1:0", "--ca-out", self.ca, "--verify-key-file", key,
             "--key-id", KEY_ID, "--team-id", TEAM_ID, "--topic", TOPIC, "--record-out", self.record] + FAULTS + extra,
            stdout=subprocess.PIPE, stderr=open(os.path.join(work, f"{name}.log"), "w"), text=True)
        line = self.process.stdout.readline()
        match = re.match(r"listening (\S+)", line)
        if not match:
            self.stop()
            raise SystemExit(f"soak: mock-server {name} did not start: {line!r}")
        self.endpoint = match.group(1)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=120)


def tokens_answered_200(record):
    """device token -> number of 200 answers in a mock's record (keyed by a short hash: 10M tokens)."""
    counts = {}
    with subprocess.Popen(["zstd", "-dc", "-q", record], stdout=subprocess.PIPE) as zstd:
        for line in zstd.stdout:
            if b'"status":200' not in line:
                continue
            token = json.loads(line)["device_token"]
            key = hashlib.blake2b(token.encode(), digest_size=8).digest()
            counts[key] = counts.get(key, 0) + 1
    return counts


def campaign(work, rows, key):
    csv = os.path.join(work, f"campaign-{rows}.csv.zst")
    subprocess.run([BIN, "gen", "--rows", str(rows), "--out", csv, "--seed", "7"], check=True,
                   stdout=subprocess.DEVNULL)
    goaway = Mock(work, f"goaway-{rows}", key, ["--goaway-after", "3000", "--seed", "1"])
    reset = Mock(work, f"reset-{rows}", key, ["--reset-after", "7000", "--seed", "2"])
    ca = os.path.join(work, "ca.pem")
    with open(ca, "w") as out:
        for mock in (goaway, reset):
            out.write(open(mock.ca).read())
    out_dir = os.path.join(work, f"out-{rows}")
    timing = os.path.join(work, f"time-{rows}.txt")
    started = time.monotonic()
    result = subprocess.run(
        ["/usr/bin/time", "-v", "-o", timing, BIN, "send", "--input", csv, "--endpoint", goaway.endpoint,
         "--endpoint", reset.endpoint, "--ca-file", ca, "--key-file", key, "--key-id", KEY_ID, "--team-id", TEAM_ID,
         "--topic", TOPIC, "--connections", "4", "--max-attempts", "8", "--progress", "never", "--out", out_dir],
        capture_output=True, text=True)
    seconds = time.monotonic() - started
    goaway.stop()
    reset.stop()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(timing).read()).group(1))
    log(f"{rows:,} rows: exit {result.returncode} in {seconds:.1f} s, peak RSS {rss / 1024:.1f} MiB")
    if result.returncode not in (0, 3):
        raise SystemExit(f"soak: send failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return out_dir, goaway, reset, rss


def check(out_dir, rows, goaway, reset):
    failures = []
    summary = json.load(open(os.path.join(out_dir, "summary.json")))
    outcomes = ["delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up", "aborted"]
    total = sum(summary.get(name, 0) for name in outcomes)
    if summary.get("rows") != rows or total != rows:
        failures.append(f"rows {summary.get('rows')} and sum of outcomes {total}, expected {rows}")
    seen = bytearray(rows + 1)
    lost_and_resent = set()
    with subprocess.Popen(["zstd", "-dc", "-q", os.path.join(out_dir, "results.jsonl.zst")],
                          stdout=subprocess.PIPE) as zstd:
        for line in zstd.stdout:
            record = json.loads(line)
            row = record["row"]
            if not 1 <= row <= rows or seen[row]:
                failures.append(f"row {row} out of range or recorded twice")
                break
            seen[row] = 1
            if record.get("retried_after_connection_loss"):
                lost_and_resent.add(hashlib.blake2b(record["device_token"].lower().encode(), digest_size=8).digest())
    missing = rows - sum(seen)
    if missing:
        failures.append(f"{missing} rows have no record")
    by_goaway = tokens_answered_200(goaway.record)
    twice_on_goaway = sum(1 for count in by_goaway.values() if count > 1)
    if twice_on_goaway:
        failures.append(f"{twice_on_goaway} tokens answered 200 twice by the GOAWAY server")
    by_reset = tokens_answered_200(reset.record)
    unexplained = 0
    twice = 0
    for key in set(by_goaway) | set(by_reset):
        if by_goaway.get(key, 0) + by_reset.get(key, 0) > 1:
            twice += 1
            if key not in lost_and_resent:
                unexplained += 1
    if unexplained:
        failures.append(f"{unexplained} tokens answered 200 twice whose row is not marked retried_after_connection_loss")
    log(f"{rows:,} rows: {summary.get('delivered', 0):,} delivered, gave_up {summary.get('gave_up', 0)}, "
        f"{len(lost_and_resent):,} resent after a lost connection, {twice:,} answered 200 twice (all after a reset)")
    return failures


def main():
    if not os.access(BIN, os.X_OK):
        raise SystemExit(f"soak: {BIN} is missing: run `make soak` (it builds the release binary)")
    work = tempfile.mkdtemp(prefix="apns-bulk-soak-")
    failures = []
    try:
        key = os.path.join(work, "key.p8")
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
                       check=True, stderr=subprocess.DEVNULL)
        rss = {}
        for rows in (SMALL_ROWS, ROWS):
            out_dir, goaway, reset, rss[rows] = campaign(work, rows, key)
            failures += [f"{rows:,} rows: {f}" for f in check(out_dir, rows, goaway, reset)]
            for path in (goaway.record, reset.record):
                os.remove(path)
        for rows, kib in rss.items():
            if kib > RSS_LIMIT_KIB:
                failures.append(f"peak RSS {kib / 1024:.1f} MiB at {rows:,} rows, over 64 MiB")
        growth = rss[ROWS] / rss[SMALL_ROWS] - 1
        log(f"peak RSS {rss[SMALL_ROWS] / 1024:.1f} MiB at {SMALL_ROWS:,} rows, {rss[ROWS] / 1024:.1f} MiB at "
            f"{ROWS:,} ({growth * 100:+.1f} %)")
        if ROWS > SMALL_ROWS and growth >= 0.10:
            failures.append(f"peak RSS grew {growth * 100:.1f} % from {SMALL_ROWS:,} to {ROWS:,} rows (limit 10 %)")
    finally:
        if os.environ.get("SOAK_KEEP") == "1":
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        log(f"FAILED: {failure}")
    print(f"soak: {0 if failures else 1} passed, {1 if failures else 0} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
