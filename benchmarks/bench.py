#!/usr/bin/env python3
"""apns-bulk throughput harness (`make bench`).

Every comparison runs both sides against the same server on 127.0.0.1 over TLS, interleaved
(A, B, A, B, ...) so that a noisy machine hurts both alike; the server is pinned to one core and the
client to the other. Medians and ratios of medians are reported, never single runs.

Environment:
  BENCH_ROWS     rows per send run (default 1000000)
  BENCH_RUNS     interleaved runs per side (default 3; scenario 6 makes at least 5: unpinned, the
                 scheduler's choices make its runs vary the most, and a median of 3 moved by ±5 %)
  BENCH_CONNS    connections (default 4)     BENCH_STREAMS  streams per connection (default 200)
  BENCH_LARGE=0  skip the 10M-row peak RSS run of scenario 3 (default: on; issue 20's held goal)
  BENCH_PEER=1   also run scenario 5: aioapns (pip-installed into benchmarks/.venv) vs apns-bulk
  BENCH_ONLY     comma-separated scenario numbers to run (default: all that apply)
  BENCH_BIN      the apns-bulk binary to measure (default: .build/release/apns-bulk), e.g. an older build

Issue 20's goals and where they are measured: client CPU per notification <= 1.15 x h2load's (1),
rate >= 0.95 x h2load's with no pinning, the whole `send` process timed (6), instructions per row
<= 30k (7, callgrind), and the held goals: peak RSS (3), latency (2), GOAWAY every 600 streams (8),
ten keys over two environments (9). Issue 18's: with one group's server 200 ms slower, the other
groups' rate drops by less than 10 % (10). Issue 33's: `cleanup` of 100,000 dead tokens against a
1,000,000-row table, PostgreSQL and SQLite, <= 10 s on PostgreSQL (11, benchmarks/cleanup_bench.py;
BENCH_CLEANUP_ROWS sets the table's rows). Issue 34's: `broadcast` at >= 0.9 x `send`'s rate, 100,000 rows
each against the mock (12, benchmarks/broadcast_bench.py; BENCH_BROADCAST_ROWS sets the rows).
"""
import datetime
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import broadcast_bench
import cleanup_bench

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.environ.get("BENCH_BIN") or os.path.join(ROOT, ".build", "release", "apns-bulk")
TOPIC = "com.example.bench"
KEY_ID = "BENCHKEY01"
TEAM_ID = "BENCHTEAM1"
SERVER_CPU, CLIENT_CPU = "0", "1"

ROWS = int(os.environ.get("BENCH_ROWS", "1000000"))
LARGE = os.environ.get("BENCH_LARGE", "1") != "0"
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
UNPINNED_RUNS = max(RUNS, 5)
CONNS = int(os.environ.get("BENCH_CONNS", "4"))
STREAMS = int(os.environ.get("BENCH_STREAMS", "200"))
ONLY = {s.strip() for s in os.environ.get("BENCH_ONLY", "").split(",") if s.strip()}


def wanted(n):
    return not ONLY or str(n) in ONLY


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, timeout=20.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on port {port} within {timeout}s")


def timed(cmd, **kw):
    """Runs cmd under /usr/bin/time -v; returns (stdout, stderr, wall_s, cpu_s, max_rss_kib)."""
    full = ["/usr/bin/time", "-v"] + cmd
    start = time.monotonic()
    p = subprocess.run(full, capture_output=True, text=True, **kw)
    wall = time.monotonic() - start
    err = p.stderr
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
    sys_ = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    if p.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(cmd[:3])}... exited {p.returncode}:\n{err[-2000:]}")
    return p.stdout, err, wall, user + sys_, rss


class Server:
    """A server pinned to SERVER_CPU (unless `pin=False`). With `announces=True` it is apns-bulk's mock-server, which listens
    on port 0 and prints `listening HOST:PORT` on stdout when ready; otherwise it is given `port` and
    is ready once that port accepts connections. Its output goes to files (a pipe nobody drains would
    block it)."""

    def __init__(self, argv, work, name, port=None, pin=True):
        self.stdout_path = os.path.join(work, f"{name}.stdout")
        self.stderr_path = os.path.join(work, f"{name}.stderr")
        self.proc = subprocess.Popen((["taskset", "-c", SERVER_CPU] if pin else []) + argv,
                                     stdout=open(self.stdout_path, "w"), stderr=open(self.stderr_path, "w"))
        self.port = port if port is not None else self._announced_port()
        if port is not None:
            wait_for_port(port, self.proc)

    def _announced_port(self, timeout=20.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.stdout_path) as f:
                m = re.search(r"^listening 127\.0\.0\.1:(\d+)$", f.read(), re.M)
            if m:
                return int(m.group(1))
            if self.proc.poll() is not None:
                with open(self.stderr_path) as f:
                    raise RuntimeError(f"server exited early with status {self.proc.returncode}:\n{f.read()[-2000:]}")
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not print its listening line within {timeout}s")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def mock_server(work, latency_ms=0, pin=True, extra=None, name="mock", topic=TOPIC, keys_file=None):
    """The mock, writing its CA to work/ca.pem (another name's to work/NAME-ca.pem: each mock has its own CA)."""
    ca = os.path.join(work, "ca.pem" if name == "mock" else f"{name}-ca.pem")
    argv = [BIN, "mock-server", "--listen", "127.0.0.1:0", "--ca-out", ca]
    if keys_file:
        argv += ["--keys-file", keys_file]
    else:
        argv += ["--verify-key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID]
    if topic:
        argv += ["--topic", topic]
    argv += ["--initial-max-streams", str(STREAMS), "--max-streams", str(STREAMS)]
    if latency_ms:
        argv += ["--latency-ms", str(latency_ms)]
    server = Server(argv + (extra or []), work, name, pin=pin)
    server.ca = ca
    return server


def pinned(pin):
    return ["taskset", "-c", CLIENT_CPU] if pin else []


def h2load(port, token, payload_file, n, path="/3/device/" + "ab" * 32, scheme_host=None, pin=True):
    url = f"https://127.0.0.1:{port}{path}"
    cmd = pinned(pin) + ["h2load", "-n", str(n), "-c", str(CONNS), "-m", str(STREAMS),
           "-t", "1", "-d", payload_file,
           "-H", f"authorization: bearer {token}", "-H", f"apns-topic: {TOPIC}",
           "-H", "apns-push-type: alert", "-H", "apns-priority: 10", url]
    out, _, wall, cpu, rss = timed(cmd)
    m = re.search(r"finished in ([\d.]+)(m?s), ([\d.]+) req/s", out)
    ok = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed", out)
    status = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if not m or not ok or not status:
        raise RuntimeError("could not read h2load output:\n" + out[-2000:])
    if int(ok.group(1)) != n or int(status.group(1)) != n:
        raise RuntimeError(f"h2load: {ok.group(1)} of {n} succeeded, {status.group(1)} 2xx "
                           "(bad token or server refusing?):\n" + out[-2000:])
    seconds = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
    return {"rate": float(m.group(3)), "elapsed_s": seconds, "cpu_s": cpu, "rss_kib": rss, "wall_s": wall,
            "succeeded": int(ok.group(1)), "failed": int(ok.group(2)), "2xx": int(status.group(1))}


def send(port, work, csv_path, out_dir, pin=True, extra=None, credentials=None, conns=None, ca=None, endpoints=None):
    """One `send` run; checks that every row was delivered once. `credentials` replaces the one key's
    flags and `endpoints` the one `--endpoint` (scenarios 9 and 10); `wall_s` is the whole process,
    start to exit."""
    shutil.rmtree(out_dir, ignore_errors=True)
    if credentials is None:
        credentials = ["--key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID,
                       "--topic", TOPIC]
    endpoints = endpoints or ["--endpoint", f"127.0.0.1:{port}"]
    cmd = (pinned(pin) + [BIN, "send", "--input", csv_path] + endpoints
                        + ["--ca-file", ca or os.path.join(work, "ca.pem")]
           + credentials + ["--connections", str(conns or CONNS), "--max-streams", str(STREAMS),
                            "--progress", "never", "--out", out_dir] + (extra or []))
    _, _, wall, cpu, rss = timed(cmd)
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    outcomes = ["delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up", "aborted"]
    if summary["rows"] != sum(summary[k] for k in outcomes):
        raise RuntimeError("accounting invariant broken in " + out_dir)
    if summary["delivered"] != summary["rows"]:
        raise RuntimeError(f"send delivered {summary['delivered']} of {summary['rows']} rows: "
                           + json.dumps({k: summary[k] for k in outcomes}))
    return {"rate": summary["notifications_per_s"], "cpu_s": cpu, "rss_kib": rss, "wall_s": wall,
            "process_rate": summary["rows"] / wall, "delivered": summary["delivered"], "rows": summary["rows"],
            "by_environment": {env: counts.get("delivered") for env, counts in summary.get("by_environment", {}).items()}}


def check_rows_once(out_dir, rows):
    """Every row appears once in the result log (the summary's counts alone would not show a row twice)."""
    seen = subprocess.run(f"zstd -dc {out_dir}/results.jsonl.zst | grep -o '^{{\"row\":[0-9]*' | sort -u | wc -l",
                          shell=True, check=True, capture_output=True, text=True).stdout.strip()
    lines = subprocess.run(f"zstd -dc {out_dir}/results.jsonl.zst | wc -l",
                           shell=True, check=True, capture_output=True, text=True).stdout.strip()
    if int(seen) != rows or int(lines) != rows:
        raise RuntimeError(f"{out_dir}: {lines} lines, {seen} distinct rows in the result log, {rows} expected")


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def setup(work):
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-out", os.path.join(work, "key.p8")], check=True, capture_output=True)
    token = subprocess.run([BIN, "token", "--key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID,
                            "--team-id", TEAM_ID], check=True, capture_output=True, text=True).stdout.strip()
    payload = os.path.join(work, "payload.json")
    body = {"aps": {"alert": {"title": "Benchmark", "body": "x" * 120}, "sound": "default"}, "id": 1}
    with open(payload, "w") as f:
        json.dump(body, f, separators=(",", ":"))
    return token, payload


def gen(work, rows):
    path = os.path.join(work, f"campaign-{rows}.csv")
    if not os.path.exists(path):
        subprocess.run([BIN, "gen", "--rows", str(rows), "--out", path, "--payload-bytes", "200",
                        "--seed", "7"], check=True, capture_output=True)
    return path


def scenario_ceiling(work, token, payload, results):
    log(f"scenario 1: ceiling, {ROWS} rows, {CONNS} x {STREAMS}, {RUNS} interleaved runs each")
    csv_path = gen(work, ROWS)
    server = mock_server(work)
    try:
        a, b = [], []
        for i in range(RUNS):
            a.append(h2load(server.port, token, payload, ROWS))
            log(f"  h2load    run {i + 1}: {a[-1]['rate']:.0f}/s cpu {a[-1]['cpu_s']:.2f}s")
            b.append(send(server.port, work, csv_path, os.path.join(work, "out-ceiling")))
            log(f"  apns-bulk run {i + 1}: {b[-1]['rate']:.0f}/s cpu {b[-1]['cpu_s']:.2f}s")
    finally:
        server.stop()
    h_rate, s_rate = median(a, "rate"), median(b, "rate")
    h_cpu = median(a, "cpu_s") / ROWS * 1e6
    s_cpu = median(b, "cpu_s") / ROWS * 1e6
    results["ceiling"] = {"rows": ROWS, "h2load_rate": h_rate, "apns_bulk_rate": s_rate,
                          "throughput_ratio": s_rate / h_rate, "goal_throughput_ratio": 0.9,
                          "h2load_cpu_s_per_million": h_cpu, "apns_bulk_cpu_s_per_million": s_cpu,
                          "cpu_ratio": s_cpu / h_cpu, "goal_cpu_ratio": 1.15, "stretch_cpu_ratio": 1.0,
                          "runs": {"h2load": a, "apns_bulk": b}}


def scenario_latency(work, token, payload, results):
    rows = min(ROWS, 200000)
    log(f"scenario 2: latency-bound, mock --latency-ms 50, {rows} rows")
    csv_path = gen(work, rows)
    server = mock_server(work, latency_ms=50)
    try:
        runs = [send(server.port, work, csv_path, os.path.join(work, "out-latency")) for _ in range(RUNS)]
    finally:
        server.stop()
    ceiling = CONNS * STREAMS / 0.05
    achieved = median(runs, "rate")
    results["latency"] = {"rows": rows, "ceiling_rate": ceiling, "apns_bulk_rate": achieved,
                          "fraction_of_ceiling": achieved / ceiling, "goal": 0.95, "runs": runs}


def scenario_memory(work, token, payload, results):
    sizes = [1_000_000] + ([10_000_000] if LARGE else [])
    log(f"scenario 3: peak RSS at {sizes}")
    server = mock_server(work)
    try:
        rss = {}
        for n in sizes:
            run = send(server.port, work, gen(work, n), os.path.join(work, f"out-mem-{n}"))
            rss[str(n)] = run["rss_kib"]
            log(f"  {n} rows: peak RSS {run['rss_kib'] / 1024:.1f} MiB")
    finally:
        server.stop()
    entry = {"peak_rss_kib": rss, "goal_peak_mib_at_10m": 64, "goal_growth": 0.10}
    if len(rss) == 2:
        entry["growth_1m_to_10m"] = rss["10000000"] / rss["1000000"] - 1
    results["memory"] = entry


def scenario_server(work, token, payload, results):
    log("scenario 4: h2load against mock-server vs nghttpd")
    docroot = os.path.join(work, "docroot")
    os.makedirs(os.path.join(docroot, "3", "device"), exist_ok=True)
    with open(os.path.join(docroot, "3", "device", "ab" * 32), "w") as f:
        f.write("{}")
    key, cert = os.path.join(work, "nghttpd.key"), os.path.join(work, "nghttpd.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    mock, a, b = mock_server(work), [], []
    port = free_port()  # nghttpd announces nothing: the one server given a port
    nghttpd = Server(["nghttpd", "-d", docroot, str(port), key, cert], work, "nghttpd", port=port)
    try:
        for _ in range(RUNS):
            a.append(h2load(mock.port, token, payload, ROWS))
            b.append(h2load(nghttpd.port, token, payload, ROWS))
    finally:
        mock.stop()
        nghttpd.stop()
    results["server"] = {"mock_rate": median(a, "rate"), "nghttpd_rate": median(b, "rate"),
                         "ratio": median(a, "rate") / median(b, "rate"), "goal": 0.8,
                         "mock_2xx": [r["2xx"] for r in a]}


def peer_python():
    """benchmarks/.venv with aioapns 4.0 (created on first use), its python."""
    venv = os.path.join(HERE, ".venv")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([python, "-c", "import aioapns"], capture_output=True).returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", "aioapns==4.0"], check=True)
    return python


def aioapns(python, port, work, rows):
    cmd = ["taskset", "-c", CLIENT_CPU, python, os.path.join(HERE, "aioapns_driver.py"), str(port),
           os.path.join(work, "ca.pem"), os.path.join(work, "key.p8"), KEY_ID, TEAM_ID, TOPIC, str(rows),
           str(CONNS), str(CONNS * STREAMS)]
    out, _, wall, cpu, rss = timed(cmd)
    run = json.loads(out.strip().splitlines()[-1])
    if run["delivered"] != rows:
        raise RuntimeError(f"aioapns delivered {run['delivered']} of {rows}")
    run.update({"cpu_s": cpu, "rss_kib": rss, "wall_s": wall})
    return run


def scenario_peer(work, token, payload, results):
    rows = min(ROWS, 50000)
    log(f"scenario 5: aioapns vs apns-bulk, {rows} rows, {CONNS} connections, {CONNS * STREAMS} in flight")
    python = peer_python()
    csv_path = gen(work, rows)
    server = mock_server(work)
    try:
        a, b = [], []
        for i in range(RUNS):
            a.append(aioapns(python, server.port, work, rows))
            log(f"  aioapns   run {i + 1}: {a[-1]['rate']:.0f}/s cpu {a[-1]['cpu_s']:.2f}s")
            b.append(send(server.port, work, csv_path, os.path.join(work, "out-peer")))
            log(f"  apns-bulk run {i + 1}: {b[-1]['rate']:.0f}/s cpu {b[-1]['cpu_s']:.2f}s")
    finally:
        server.stop()
    results["peer"] = {"rows": rows, "aioapns_rate": median(a, "rate"), "apns_bulk_rate": median(b, "rate"),
                       "ratio": median(b, "rate") / median(a, "rate"), "goal": 50,
                       "runs": {"aioapns": a, "apns_bulk": b}}


def scenario_unpinned(work, token, payload, results):
    """Issue 20's goal 2, as a new user measures: no taskset anywhere, h2load's own req/s against
    rows / the whole `send` process's wall time (start to exit: prescan, handshakes, the last frame)."""
    log(f"scenario 6: unpinned, {ROWS} rows, whole send process timed, {UNPINNED_RUNS} interleaved runs each")
    csv_path = gen(work, ROWS)
    server = mock_server(work, pin=False)
    try:
        a, b = [], []
        for i in range(UNPINNED_RUNS):
            a.append(h2load(server.port, token, payload, ROWS, pin=False))
            log(f"  h2load    run {i + 1}: {a[-1]['rate']:.0f}/s cpu {a[-1]['cpu_s']:.2f}s")
            b.append(send(server.port, work, csv_path, os.path.join(work, "out-unpinned"), pin=False))
            log(f"  apns-bulk run {i + 1}: {b[-1]['process_rate']:.0f}/s start to exit "
                f"({b[-1]['rate']:.0f}/s by summary.json) cpu {b[-1]['cpu_s']:.2f}s")
    finally:
        server.stop()
    h_rate, s_rate = median(a, "rate"), median(b, "process_rate")
    results["unpinned"] = {"rows": ROWS, "h2load_rate": h_rate, "apns_bulk_process_rate": s_rate,
                           "apns_bulk_summary_rate": median(b, "rate"), "ratio": s_rate / h_rate, "goal": 0.95,
                           "h2load_cpu_s_per_million": median(a, "cpu_s") / ROWS * 1e6,
                           "apns_bulk_cpu_s_per_million": median(b, "cpu_s") / ROWS * 1e6,
                           "runs": {"h2load": a, "apns_bulk": b}}


def callgrind_total(out_file):
    with open(out_file) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals line in {out_file}")


def scenario_instructions(work, token, payload, results):
    """Issue 20's goal 3: callgrind's per-row marginal, (Ir of a 90k-row send - Ir of a 30k-row one) / 60k,
    as benchmarks/profile measures it; h2load's per request the same way, for comparison."""
    if not shutil.which("valgrind"):
        log("scenario 7: skipped, valgrind not installed")
        results["instructions"] = {"skipped": "valgrind not installed (make bench-deps installs it)"}
        return
    log("scenario 7: instructions per row (callgrind, 90k - 30k rows)")
    # valgrind 3.19 cannot read Swift's DWARF 5: profile a copy without debug info.
    binary = os.path.join(work, "apns-bulk.nodebug")
    subprocess.run(["objcopy", "--strip-debug", BIN, binary], check=True)
    server = mock_server(work)
    totals = {}
    try:
        for n in (30000, 90000):
            csv_path = gen(work, n)
            out_dir = os.path.join(work, f"out-cg-{n}")
            shutil.rmtree(out_dir, ignore_errors=True)
            cg_out = os.path.join(work, f"cg.send.{n}.out")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}", binary, "send",
                            "--input", csv_path, "--endpoint", f"127.0.0.1:{server.port}",
                            "--ca-file", os.path.join(work, "ca.pem"), "--key-file", os.path.join(work, "key.p8"),
                            "--key-id", KEY_ID, "--team-id", TEAM_ID, "--topic", TOPIC,
                            "--connections", str(CONNS), "--max-streams", str(STREAMS), "--progress", "never",
                            "--out", out_dir], check=True, capture_output=True)
            totals[f"send_{n}"] = callgrind_total(cg_out)
            cg_out = os.path.join(work, f"cg.h2load.{n}.out")
            url = f"https://127.0.0.1:{server.port}/3/device/" + "ab" * 32
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cg_out}", "h2load", "-n", str(n),
                            "-c", str(CONNS), "-m", str(STREAMS), "-t", "1", "-d", payload,
                            "-H", f"authorization: bearer {token}", "-H", f"apns-topic: {TOPIC}",
                            "-H", "apns-push-type: alert", "-H", "apns-priority: 10", url],
                           check=True, capture_output=True)
            totals[f"h2load_{n}"] = callgrind_total(cg_out)
    finally:
        server.stop()
    per_row = (totals["send_90000"] - totals["send_30000"]) / 60000
    h2load_per_request = (totals["h2load_90000"] - totals["h2load_30000"]) / 60000
    log(f"  send {per_row:.0f} instructions per row, h2load {h2load_per_request:.0f} per request")
    results["instructions"] = {"send_per_row": per_row, "h2load_per_request": h2load_per_request,
                               "send_fixed_start": totals["send_30000"] - 30000 * per_row, "goal": 30000,
                               "totals": totals}


def scenario_goaway(work, token, payload, results):
    """Held goal: with a GOAWAY after every connection's 600th stream, the whole run takes at most
    2 x the clean run's time; every row still delivered once (checked in the result log too)."""
    rows = min(ROWS, 300000)
    log(f"scenario 8: GOAWAY every 600 streams vs clean, {rows} rows, {RUNS} interleaved runs each")
    csv_path = gen(work, rows)
    clean, goaway = mock_server(work), mock_server(work, extra=["--goaway-after", "600"], name="mock-goaway")
    try:
        a, b = [], []
        for i in range(RUNS):
            a.append(send(clean.port, work, csv_path, os.path.join(work, "out-clean")))
            out_dir = os.path.join(work, "out-goaway")
            b.append(send(goaway.port, work, csv_path, out_dir, ca=goaway.ca))
            rows_seen = subprocess.run(f"zstd -dc {out_dir}/results.jsonl.zst | grep -o '^{{\"row\":[0-9]*' | sort -u | wc -l",
                                       shell=True, check=True, capture_output=True, text=True).stdout.strip()
            if int(rows_seen) != rows:
                raise RuntimeError(f"GOAWAY run: {rows_seen} distinct rows in the result log, {rows} expected")
            log(f"  clean run {i + 1}: {a[-1]['wall_s']:.2f}s, GOAWAY run {i + 1}: {b[-1]['wall_s']:.2f}s")
    finally:
        clean.stop()
        goaway.stop()
    ratio = median(b, "wall_s") / median(a, "wall_s")
    results["goaway"] = {"rows": rows, "clean_wall_s": median(a, "wall_s"), "goaway_wall_s": median(b, "wall_s"),
                         "ratio": ratio, "goal": 2.0, "runs": {"clean": a, "goaway": b}}


def several_keys_supported():
    """Issue 18's several keys: `[[keys]]` files read by both the mock and `send` (`--keys-file`)."""
    mock_help = subprocess.run([BIN, "mock-server", "--help"], capture_output=True, text=True).stdout
    send_help = subprocess.run([BIN, "send", "--help"], capture_output=True, text=True).stdout
    return "--keys-file" in mock_help and "--keys-file" in send_help and "--environment" in mock_help


TEN_KEY_IDS = [f"BENCHTEN{k:02d}" for k in range(10)]


def key_environment(k):
    """Apps 0-4 have production keys, apps 5-9 sandbox keys: ten topic-specific keys over two environments."""
    return "production" if k < 5 else "sandbox"


def ten_keys_file(work):
    """work/ten-keys.toml: ten topic-specific keys, one per app (com.example.bench0 ... bench9), made once."""
    keys = os.path.join(work, "ten-keys.toml")
    if os.path.exists(keys):
        return keys
    with open(keys, "w") as f:
        for k, key_id in enumerate(TEN_KEY_IDS):
            key_file = os.path.join(work, f"AuthKey_{key_id}.p8")
            subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-out", key_file], check=True, capture_output=True)
            f.write(f'[[keys]]\nfile = "{key_file}"\nkey-id = "{key_id}"\nteam-id = "{TEAM_ID}"\n'
                    f'environment = "{key_environment(k)}"\ntopics = ["{TOPIC}{k}"]\n\n')
    return keys


def campaign_with_apps(work, rows, name, app_of_row, environment_column=True):
    """gen's campaign with a topic column (and an environment column): row i goes to app app_of_row(i)."""
    source = gen(work, rows)
    csv_path = os.path.join(work, f"campaign-{name}-{rows}.csv")
    with open(source) as src, open(csv_path, "w") as dst:
        dst.write(src.readline().rstrip("\n") + (",topic,environment\n" if environment_column else ",topic\n"))
        for i, line in enumerate(src):
            k = app_of_row(i)
            extra = f",{key_environment(k)}" if environment_column else ""
            dst.write(f"{line.rstrip(chr(10))},{TOPIC}{k}{extra}\n")
    return csv_path


class EnvironmentMocks:
    """One mock per environment, both reading the ten keys and both pinned to the one server core, so the
    two together have the capacity of the one-key run's single mock. `sandbox_latency_ms` slows the
    sandbox one; `record` makes the production one write its requests (time_ms, key_id) to a file."""

    def __init__(self, work, keys, name, sandbox_latency_ms=0, record=None):
        self.production = mock_server(work, topic=None, keys_file=keys, name=f"{name}-production",
                                      extra=["--environment", "production"] + (["--record-out", record] if record else []))
        try:
            self.sandbox = mock_server(work, topic=None, keys_file=keys, name=f"{name}-sandbox",
                                       latency_ms=sandbox_latency_ms, extra=["--environment", "sandbox"])
        except Exception:
            self.production.stop()
            raise
        self.ca = os.path.join(work, f"{name}-cas.pem")
        with open(self.ca, "w") as f:
            for server in (self.production, self.sandbox):
                with open(server.ca) as c:
                    f.write(c.read())
        self.endpoints = ["--endpoint", f"production=127.0.0.1:{self.production.port}",
                          "--endpoint", f"sandbox=127.0.0.1:{self.sandbox.port}"]

    def stop(self):
        self.production.stop()
        self.sandbox.stop()


def scenario_ten_keys(work, token, payload, results):
    """Held goal (issues 18, 20): a campaign over ten apps, each with its own topic-specific key, five apps in
    production and five in sandbox (an environment column), one mock per environment, at >= 0.9 x the rate of
    the same rows under one team-scoped key against one mock. Same total connections; same server capacity:
    the two mocks share the one server core (taskset) the single mock has."""
    if not several_keys_supported():
        log("scenario 9: not measured: needs several keys (issue 18)")
        results["ten_keys"] = {"skipped": "not measured: needs several keys (issue 18)"}
        return
    rows = min(ROWS, 1000000)
    log(f"scenario 9: ten keys over two environments vs one key, {rows} rows, {RUNS} interleaved runs each")
    keys = ten_keys_file(work)
    ten_csv = campaign_with_apps(work, rows, "ten-keys", lambda i: i % 10)
    one_csv = campaign_with_apps(work, rows, "one-key", lambda i: i % 10, environment_column=False)
    conns = max(CONNS, 10)  # a connection per key at least: both runs get the same number
    one = mock_server(work, topic=None, name="mock-one-key")
    try:
        ten = EnvironmentMocks(work, keys, "mock-ten-keys")
    except Exception:
        one.stop()
        raise
    try:
        a, b = [], []
        one_key = ["--key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID]
        for i in range(RUNS):
            a.append(send(one.port, work, one_csv, os.path.join(work, "out-one-key"), credentials=one_key,
                          conns=conns, ca=one.ca))
            out_dir = os.path.join(work, "out-ten-keys")
            b.append(send(None, work, ten_csv, out_dir, credentials=["--keys-file", keys], conns=conns,
                          ca=ten.ca, endpoints=ten.endpoints))
            check_rows_once(out_dir, rows)
            half = {"production": rows // 2, "sandbox": rows - rows // 2}
            if b[-1]["by_environment"] != half:
                raise RuntimeError(f"ten keys: delivered by environment {b[-1]['by_environment']}, {half} expected")
            log(f"  one key run {i + 1}: {a[-1]['rate']:.0f}/s, ten keys run {i + 1}: {b[-1]['rate']:.0f}/s")
    finally:
        one.stop()
        ten.stop()
    results["ten_keys"] = {"rows": rows, "connections": conns, "environments": 2, "one_key_rate": median(a, "rate"),
                           "ten_keys_rate": median(b, "rate"), "ratio": median(b, "rate") / median(a, "rate"),
                           "goal": 0.9, "same_capacity": "both mocks pinned to the one server core of the one-key mock",
                           "runs": {"one_key": a, "ten_keys": b}}


def production_rate(record):
    """Delivered/s of the production groups, by the production mock's own clock: 200s over the span from
    its first to its last answer (the sandbox group's rows never reach it)."""
    out = subprocess.run(["zstd", "-dc", record], check=True, capture_output=True, text=True).stdout
    times = [json.loads(line)["time_ms"] for line in out.splitlines() if '"status":200' in line]
    span = (max(times) - min(times)) / 1000
    return len(times), len(times) / span


def scenario_slow_group(work, token, payload, results):
    """Issue 18: with one group's server answering 200 ms slower, the other groups' rate drops by less
    than 10 %. Five production groups (apps 0-4) and one sandbox group (app 5, one row in 60) on the ten-key
    setup of scenario 9; interleaved runs with the sandbox mock at +0 ms and +200 ms. The production
    groups' rate comes from the production mock's record (time_ms of each 200)."""
    if not several_keys_supported():
        log("scenario 10: not measured: needs several keys (issue 18)")
        results["slow_group"] = {"skipped": "not measured: needs several keys (issue 18)"}
        return
    rows = min(ROWS, 300000)
    log(f"scenario 10: one group's server 200 ms slower, {rows} rows, {RUNS} interleaved runs each")
    keys = ten_keys_file(work)
    csv_path = campaign_with_apps(work, rows, "slow-group", lambda i: 5 if i % 60 == 59 else i % 5)
    slow_rows = sum(1 for i in range(rows) if i % 60 == 59)
    conns = max(CONNS, 10)
    runs = {"clean": [], "slow": []}
    for i in range(RUNS):
        for kind, latency in (("clean", 0), ("slow", 200)):
            record = os.path.join(work, f"record-{kind}.jsonl.zst")
            mocks = EnvironmentMocks(work, keys, f"mock-{kind}", sandbox_latency_ms=latency, record=record)
            out_dir = os.path.join(work, f"out-slow-group-{kind}")
            try:
                run = send(None, work, csv_path, out_dir, credentials=["--keys-file", keys], conns=conns,
                           ca=mocks.ca, endpoints=mocks.endpoints)
            finally:
                mocks.stop()
            check_rows_once(out_dir, rows)
            delivered, rate = production_rate(record)
            if delivered != rows - slow_rows or run["by_environment"].get("sandbox") != slow_rows:
                raise RuntimeError(f"slow group ({kind}): production mock answered {delivered} 200s, "
                                   f"{rows - slow_rows} expected; by environment {run['by_environment']}")
            run["production_rate"] = rate
            runs[kind].append(run)
            log(f"  {kind} run {i + 1}: production groups {rate:.0f}/s, whole run {run['wall_s']:.2f}s")
    clean, slow = median(runs["clean"], "production_rate"), median(runs["slow"], "production_rate")
    results["slow_group"] = {"rows": rows, "slow_group_rows": slow_rows, "connections": conns, "latency_ms": 200,
                             "others_clean_rate": clean, "others_slow_rate": slow, "drop": 1 - slow / clean,
                             "goal_drop": 0.10, "runs": runs}


def table(results):
    """One line per goal: the medians, the ratio and whether the goal is met. Issue 20's goals are marked
    (goal 1-3, held); a scenario not run prints no line, one that cannot run says why."""
    rows = []

    def verdict(ok):
        return "met" if ok else "MISSED"

    if "ceiling" in results:
        c = results["ceiling"]
        cpu_verdict = verdict(c["cpu_ratio"] <= 1.15)
        if c["cpu_ratio"] <= 1.15:
            cpu_verdict += ", stretch " + ("met" if c["cpu_ratio"] <= 1.0 else "missed")
        rows += [("1 ceiling, pinned: apns-bulk / h2load throughput", f"{c['apns_bulk_rate']:.0f} / {c['h2load_rate']:.0f}/s",
                  f"{c['throughput_ratio']:.3f}", ">= 0.90", verdict(c["throughput_ratio"] >= 0.9)),
                 ("1 goal 1: client CPU s per 1M, apns-bulk / h2load",
                  f"{c['apns_bulk_cpu_s_per_million']:.2f} / {c['h2load_cpu_s_per_million']:.2f}",
                  f"{c['cpu_ratio']:.3f}", "<= 1.15", cpu_verdict)]
    if "unpinned" in results:
        u = results["unpinned"]
        rows.append(("6 goal 2: unpinned rate, send start-to-exit / h2load",
                     f"{u['apns_bulk_process_rate']:.0f} / {u['h2load_rate']:.0f}/s",
                     f"{u['ratio']:.3f}", ">= 0.95", verdict(u["ratio"] >= 0.95)))
    if "instructions" in results:
        i = results["instructions"]
        if "skipped" in i:
            rows.append(("7 goal 3: instructions per row (callgrind)", i["skipped"], "", "<= 30k", "not measured"))
        else:
            rows.append(("7 goal 3: instructions per row (callgrind); h2load's",
                         f"{i['send_per_row'] / 1000:.1f}k; {i['h2load_per_request'] / 1000:.1f}k",
                         f"{i['send_per_row'] / i['h2load_per_request']:.3f}", "<= 30k",
                         verdict(i["send_per_row"] <= 30000)))
    if "latency" in results:
        l = results["latency"]
        rows.append(("2 held: latency 50 ms, achieved / ceiling", f"{l['apns_bulk_rate']:.0f} / {l['ceiling_rate']:.0f}/s",
                     f"{l['fraction_of_ceiling']:.3f}", ">= 0.95", verdict(l["fraction_of_ceiling"] >= 0.95)))
    if "memory" in results:
        m = results["memory"]
        for n, kib in m["peak_rss_kib"].items():
            ok = kib / 1024 <= 64
            rows.append((f"3 held: peak RSS at {int(n):,} rows", f"{kib / 1024:.1f} MiB", "", "<= 64 MiB", verdict(ok)))
        if "growth_1m_to_10m" in m:
            g = m["growth_1m_to_10m"]
            rows.append(("3 held: RSS growth 1M -> 10M", "", f"{g:.1%}", "< 10%", verdict(g < 0.10)))
        else:
            rows.append(("3 held: peak RSS at 10,000,000 rows", "not measured (BENCH_LARGE=0)", "", "<= 64 MiB",
                         "not measured"))
    if "goaway" in results:
        g = results["goaway"]
        rows.append(("8 held: GOAWAY every 600 streams / clean, time", f"{g['goaway_wall_s']:.2f} / {g['clean_wall_s']:.2f} s",
                     f"{g['ratio']:.3f}", "<= 2.00", verdict(g["ratio"] <= 2.0)))
    if "ten_keys" in results:
        t = results["ten_keys"]
        if "skipped" in t:
            rows.append(("9 held: ten keys / one key, rate", t["skipped"], "", ">= 0.90", "not measured"))
        else:
            rows.append(("9 held: ten keys, 2 environments / one key, rate", f"{t['ten_keys_rate']:.0f} / {t['one_key_rate']:.0f}/s",
                         f"{t['ratio']:.3f}", ">= 0.90", verdict(t["ratio"] >= 0.9)))
    if "slow_group" in results:
        g = results["slow_group"]
        if "skipped" in g:
            rows.append(("10 issue 18: one group 200 ms slower, others' rate drop", g["skipped"], "", "< 10%",
                         "not measured"))
        else:
            rows.append(("10 issue 18: one group 200 ms slower, others' rate drop",
                         f"{g['others_slow_rate']:.0f} / {g['others_clean_rate']:.0f}/s", f"{g['drop']:.1%}",
                         "< 10%", verdict(g["drop"] < 0.10)))
    if "cleanup" in results:
        rows.append(cleanup_bench.table_row(results, verdict))
    if "broadcast" in results:
        rows.append(broadcast_bench.table_row(results, verdict))
    if "server" in results:
        s = results["server"]
        rows.append(("4 h2load vs mock / vs nghttpd", f"{s['mock_rate']:.0f} / {s['nghttpd_rate']:.0f}/s",
                     f"{s['ratio']:.3f}", ">= 0.80", verdict(s["ratio"] >= 0.8)))
    if "peer" in results:
        p = results["peer"]
        rows.append(("5 apns-bulk / aioapns", f"{p['apns_bulk_rate']:.0f} / {p['aioapns_rate']:.0f}/s",
                     f"{p['ratio']:.1f}", ">= 50", verdict(p["ratio"] >= 50)))
    width = max(len(r[0]) for r in rows) if rows else 10
    value_width = max([28] + [len(r[1]) for r in rows])
    print(f"{ROWS} rows, {CONNS} connections x {STREAMS} streams, {RUNS} interleaved runs per side, medians")
    print(f"{'scenario':<{width}}  {'medians':>{value_width}}  {'ratio':>7}  {'goal':<9}  verdict")
    for name, value, ratio, goal, ok in rows:
        print(f"{name:<{width}}  {value:>{value_width}}  {ratio:>7}  {goal:<9}  {ok}")


def main():
    if not os.path.exists(BIN):
        sys.exit(f"bench: {BIN} is missing; run `make bench` (it builds the release binary first)")
    for tool in ("h2load", "nghttpd", "taskset", "openssl", "zstd"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed; `make deps` installs it")
    work = tempfile.mkdtemp(prefix="apns-bulk-bench-")
    results = {}
    started = time.monotonic()
    try:
        token, payload = setup(work)
        if wanted(1):
            scenario_ceiling(work, token, payload, results)
        if wanted(2):
            scenario_latency(work, token, payload, results)
        if wanted(3):
            scenario_memory(work, token, payload, results)
        if wanted(6):
            scenario_unpinned(work, token, payload, results)
        if wanted(7):
            scenario_instructions(work, token, payload, results)
        if wanted(8):
            scenario_goaway(work, token, payload, results)
        if wanted(9):
            scenario_ten_keys(work, token, payload, results)
        if wanted(10):
            scenario_slow_group(work, token, payload, results)
        if wanted(11):
            cleanup_bench.scenario_cleanup(work, results, BIN, RUNS, timed, log, free_port)
        if wanted(12):
            broadcast_bench.scenario_broadcast(work, results, sys.modules[__name__])
        if wanted(4):
            scenario_server(work, token, payload, results)
        if os.environ.get("BENCH_PEER") == "1" and wanted(5):
            scenario_peer(work, token, payload, results)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    latest = {"machine": {"host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform()},
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": commit, "connections": CONNS, "streams": STREAMS, "runs": RUNS,
              "load_average": os.getloadavg(), "duration_s": time.monotonic() - started, "scenarios": results}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "latest.json"), "w") as f:
        json.dump(latest, f, indent=2)
    table(results)
    print(f"bench took {time.monotonic() - started:.0f} s; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
