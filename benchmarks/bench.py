#!/usr/bin/env python3
"""apns-bulk throughput harness (`make bench`).

Every comparison runs both sides against the same server on 127.0.0.1 over TLS, interleaved
(A, B, A, B, ...) so that a noisy machine hurts both alike; the server is pinned to one core and the
client to the other. Medians and ratios of medians are reported, never single runs.

Environment:
  BENCH_ROWS     rows per send run (default 1000000)
  BENCH_RUNS     interleaved runs per side (default 3)
  BENCH_CONNS    connections (default 4)     BENCH_STREAMS  streams per connection (default 200)
  BENCH_LARGE=1  also measure peak RSS at 10M rows (scenario 3)
  BENCH_PEER=1   also run scenario 5: aioapns (pip-installed into benchmarks/.venv) vs apns-bulk
  BENCH_ONLY     comma-separated scenario numbers to run (default: all that apply)
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, ".build", "release", "apns-bulk")
TOPIC = "com.example.bench"
KEY_ID = "BENCHKEY01"
TEAM_ID = "BENCHTEAM1"
SERVER_CPU, CLIENT_CPU = "0", "1"

ROWS = int(os.environ.get("BENCH_ROWS", "1000000"))
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
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
    """A server pinned to SERVER_CPU. With `announces=True` it is apns-bulk's mock-server, which listens
    on port 0 and prints `listening HOST:PORT` on stdout when ready; otherwise it is given `port` and
    is ready once that port accepts connections. Its output goes to files (a pipe nobody drains would
    block it)."""

    def __init__(self, argv, work, name, port=None):
        self.stdout_path = os.path.join(work, f"{name}.stdout")
        self.stderr_path = os.path.join(work, f"{name}.stderr")
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + argv,
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


def mock_server(work, latency_ms=0):
    argv = [BIN, "mock-server", "--listen", "127.0.0.1:0", "--ca-out", os.path.join(work, "ca.pem"),
            "--verify-key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID,
            "--topic", TOPIC, "--initial-max-streams", str(STREAMS), "--max-streams", str(STREAMS)]
    if latency_ms:
        argv += ["--latency-ms", str(latency_ms)]
    return Server(argv, work, "mock")


def h2load(port, token, payload_file, n, path="/3/device/" + "ab" * 32, scheme_host=None):
    url = f"https://127.0.0.1:{port}{path}"
    cmd = ["taskset", "-c", CLIENT_CPU, "h2load", "-n", str(n), "-c", str(CONNS), "-m", str(STREAMS),
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


def send(port, work, csv_path, out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = ["taskset", "-c", CLIENT_CPU, BIN, "send", "--input", csv_path,
           "--endpoint", f"127.0.0.1:{port}", "--ca-file", os.path.join(work, "ca.pem"),
           "--key-file", os.path.join(work, "key.p8"), "--key-id", KEY_ID, "--team-id", TEAM_ID,
           "--topic", TOPIC, "--connections", str(CONNS), "--max-streams", str(STREAMS),
           "--progress", "never", "--out", out_dir]
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
            "delivered": summary["delivered"], "rows": summary["rows"]}


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
                          "cpu_ratio": s_cpu / h_cpu, "goal_cpu_ratio": 1.5, "runs": {"h2load": a, "apns_bulk": b}}


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
    sizes = [1_000_000] + ([10_000_000] if os.environ.get("BENCH_LARGE") == "1" else [])
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


def table(results):
    """One line per goal: the medians, the ratio and whether the goal is met."""
    rows = []

    def verdict(ok):
        return "met" if ok else "MISSED"

    if "ceiling" in results:
        c = results["ceiling"]
        rows += [("1 ceiling: apns-bulk / h2load throughput", f"{c['apns_bulk_rate']:.0f} / {c['h2load_rate']:.0f}/s",
                  f"{c['throughput_ratio']:.2f}", ">= 0.90", verdict(c["throughput_ratio"] >= 0.9)),
                 ("1 client CPU s per 1M: apns-bulk / h2load",
                  f"{c['apns_bulk_cpu_s_per_million']:.2f} / {c['h2load_cpu_s_per_million']:.2f}",
                  f"{c['cpu_ratio']:.2f}", "<= 1.50", verdict(c["cpu_ratio"] <= 1.5))]
    if "latency" in results:
        l = results["latency"]
        rows.append(("2 latency 50 ms: achieved / ceiling", f"{l['apns_bulk_rate']:.0f} / {l['ceiling_rate']:.0f}/s",
                     f"{l['fraction_of_ceiling']:.2f}", ">= 0.95", verdict(l["fraction_of_ceiling"] >= 0.95)))
    if "memory" in results:
        m = results["memory"]
        for n, kib in m["peak_rss_kib"].items():
            ok = kib / 1024 <= 64
            rows.append((f"3 peak RSS at {int(n):,} rows", f"{kib / 1024:.1f} MiB", "", "<= 64 MiB", verdict(ok)))
        if "growth_1m_to_10m" in m:
            g = m["growth_1m_to_10m"]
            rows.append(("3 RSS growth 1M -> 10M", "", f"{g:.1%}", "< 10%", verdict(g < 0.10)))
    if "server" in results:
        s = results["server"]
        rows.append(("4 h2load vs mock / vs nghttpd", f"{s['mock_rate']:.0f} / {s['nghttpd_rate']:.0f}/s",
                     f"{s['ratio']:.2f}", ">= 0.80", verdict(s["ratio"] >= 0.8)))
    if "peer" in results:
        p = results["peer"]
        rows.append(("5 apns-bulk / aioapns", f"{p['apns_bulk_rate']:.0f} / {p['aioapns_rate']:.0f}/s",
                     f"{p['ratio']:.1f}", ">= 50", verdict(p["ratio"] >= 50)))
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"{ROWS} rows, {CONNS} connections x {STREAMS} streams, {RUNS} interleaved runs per side, medians")
    print(f"{'scenario':<{width}}  {'medians':>28}  {'ratio':>7}  {'goal':<9}  verdict")
    for name, value, ratio, goal, ok in rows:
        print(f"{name:<{width}}  {value:>28}  {ratio:>7}  {goal:<9}  {ok}")


def main():
    if not os.path.exists(BIN):
        sys.exit(f"bench: {BIN} is missing; run `make bench` (it builds the release binary first)")
    for tool in ("h2load", "nghttpd", "taskset", "openssl"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed; `make deps` installs it")
    work = tempfile.mkdtemp(prefix="apns-bulk-bench-")
    results = {}
    try:
        token, payload = setup(work)
        if wanted(1):
            scenario_ceiling(work, token, payload, results)
        if wanted(2):
            scenario_latency(work, token, payload, results)
        if wanted(3):
            scenario_memory(work, token, payload, results)
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
              "scenarios": results}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "latest.json"), "w") as f:
        json.dump(latest, f, indent=2)
    table(results)


if __name__ == "__main__":
    main()
