#!/usr/bin/env python3
"""How much a kill -9 makes `send --resume` send twice: the crash window, measured from the mock's record.

Usage: benchmarks/profile/crashwindow.py BIN [TRIALS] [--rate R] [--rows N] [--load] [--seed S]

Each trial: a mock-server recording every request (5 ms latency), `send --rate R`, SIGKILL at a
random moment 0.3-2.0 s after it started sending (with --load, while two busy loops hold both
cores), then `send --resume` to the end. A row the mock saw twice is a row whose answer the crash
lost; divided by the rate, the seconds of answers that were unlogged at the kill (in-flight rows
included). Prints one line a trial and the median and maximum; with a build that reports it
exactly, checks resent_after_crash against the mock's count.
"""
import argparse, json, os, random, signal, statistics, subprocess, sys, tempfile, time

KEY_ID, TEAM_ID, TOPIC = "KEYID12345", "TEAM123456", "com.example.app"


def start_mock(binary, work, record):
    ca = os.path.join(work, "ca.pem")
    mock = subprocess.Popen([binary, "mock-server", "--listen", "127.0.0.1:0", "--ca-out", ca,
                             "--verify-key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID,
                             "--team-id", TEAM_ID, "--topic", TOPIC, "--record-out", record,
                             "--latency-ms", "5", "--max-streams", "100"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in mock.stdout:
        if line.startswith("listening "):
            return mock, line.split()[-1], ca
    raise SystemExit("the mock did not start")


def send_args(binary, work, endpoint, ca, out, rate):
    return [binary, "send", "--input", os.path.join(work, "c.csv"), "--endpoint", endpoint, "--ca-file", ca,
            "--key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID,
            "--topic", TOPIC, "--connections", "2", "--max-streams", "50", "--progress", "never",
            "--out", out, "--rate", str(rate)]


def trial(binary, work, number, rate, load, rng):
    record = os.path.join(work, f"record{number}.jsonl.zst")
    out = os.path.join(work, f"out{number}")
    mock, endpoint, ca = start_mock(binary, work, record)
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(2)] if load else []
    try:
        run = subprocess.Popen(send_args(binary, work, endpoint, ca, out, rate),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while not any(os.path.exists(os.path.join(out, name)) for name in ("sent-rows", "sent-through")):
            if time.time() > deadline or run.poll() is not None:
                raise SystemExit("send never started")
            time.sleep(0.005)
        time.sleep(rng.uniform(0.3, 2.0))
        killed_ms = time.time() * 1000
        run.send_signal(signal.SIGKILL)
        run.wait()
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    resumed = subprocess.run(send_args(binary, work, endpoint, ca, out, rate) + ["--resume"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mock.send_signal(signal.SIGTERM)
    mock.wait()
    seen, last_half_second = {}, 0
    for line in subprocess.run(["zstd", "-dc", "-q", record], stdout=subprocess.PIPE, text=True).stdout.splitlines():
        request = json.loads(line)
        seen[request["device_token"]] = seen.get(request["device_token"], 0) + 1
        if killed_ms - 500 <= request["time_ms"] <= killed_ms:
            last_half_second += 1
    twice = sum(count - 1 for count in seen.values())
    summary = json.load(open(os.path.join(out, "summary.json")))
    return twice, last_half_second, summary.get("resent_after_crash"), resumed.returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("trials", type=int, nargs="?", default=10)
    parser.add_argument("--rate", type=int, default=5000)
    parser.add_argument("--rows", type=int, default=15000)
    parser.add_argument("--load", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    binary = os.path.realpath(options.binary)
    rng = random.Random(options.seed)
    with tempfile.TemporaryDirectory(prefix="crashwindow-") as work:
        subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-out", os.path.join(work, "key.p8")], check=True, stderr=subprocess.DEVNULL)
        subprocess.run([binary, "gen", "--rows", str(options.rows), "--out", os.path.join(work, "c.csv"), "--seed", "7"],
                       check=True, stdout=subprocess.DEVNULL)
        windows = []
        for number in range(options.trials):
            twice, recent, resent, status = trial(binary, work, number, options.rate, options.load, rng)
            windows.append(twice / options.rate)
            print(f"trial {number}: sent twice {twice} ({twice / options.rate:.3f} s of answers), "
                  f"answered in the last 0.5 s {recent}, resent_after_crash {resent}, resume exit {status}", flush=True)
        print(f"window: median {statistics.median(windows):.3f} s, max {max(windows):.3f} s "
              f"({options.trials} kills at {options.rate}/s{', both cores busy' if options.load else ''})")


if __name__ == "__main__":
    main()
