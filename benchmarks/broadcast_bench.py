"""Scenario 12 of `make bench` (issue 34): `apns-bulk broadcast` against the mock vs `send` of as many
rows, interleaved, both pinned to the client core and the mock to the server core. Goal: broadcast's
rate >= 0.9 x send's (it is send's engine: a broadcast row differs by its own header fields, the
channel id among them, and by its record's kind). BENCH_BROADCAST_ROWS sets the rows (default 100,000).
"""
import json
import os
import shutil

ROWS = int(os.environ.get("BENCH_BROADCAST_ROWS", "100000"))
CHANNELS = 1000


def write_updates(work, rows):
    """channel_id,payload: rows updates over CHANNELS channels, each payload about 200 bytes."""
    path = os.path.join(work, f"updates-{rows}.csv")
    if os.path.exists(path):
        return path
    import base64
    channels = [base64.b64encode(f"bench-channel-{i:06d}".encode()).decode() for i in range(CHANNELS)]
    with open(path, "w") as f:
        f.write("channel_id,payload\n")
        for i in range(rows):
            body = {"aps": {"event": "update", "timestamp": 1767225600 + i,
                            "content-state": {"home": i % 7, "away": i % 5, "minute": i % 90, "note": "x" * 100}}}
            f.write(channels[i % CHANNELS] + ',"' + json.dumps(body, separators=(",", ":")).replace('"', '""') + '"\n')
    return path


def broadcast(bin_path, timed, pinned, work, port, ca, csv_path, out_dir, conns, streams, topic, key_id, team_id):
    """One `broadcast` run; checks that every row was delivered once (summary and result log)."""
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = pinned + [bin_path, "broadcast", "--input", csv_path, "--bundle-id", topic, "--endpoint", f"127.0.0.1:{port}",
                    "--ca-file", ca, "--key-file", os.path.join(work, "key.p8"), "--key-id", key_id, "--team-id", team_id,
                    "--connections", str(conns), "--max-streams", str(streams), "--progress", "never", "--out", out_dir]
    _, _, wall, cpu, rss = timed(cmd)
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    outcomes = ["delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up", "aborted"]
    if summary["rows"] != sum(summary[k] for k in outcomes) or summary["delivered"] != summary["rows"]:
        raise RuntimeError("broadcast: " + json.dumps({k: summary[k] for k in ["rows"] + outcomes}))
    return {"rate": summary["notifications_per_s"], "cpu_s": cpu, "rss_kib": rss, "wall_s": wall}


def scenario_broadcast(work, results, bench):
    """`bench` is bench.py's module: its mock, send, gen, timing and constants."""
    rows = min(ROWS, bench.ROWS)
    bench.log(f"scenario 12: broadcast vs send, {rows} rows, {bench.CONNS} x {bench.STREAMS}, {bench.RUNS} interleaved runs each")
    updates = write_updates(work, rows)
    campaign = bench.gen(work, rows)
    server = bench.mock_server(work, extra=["--admit-any-channel"], name="mock-broadcast")
    try:
        a, b = [], []
        for i in range(bench.RUNS):
            a.append(bench.send(server.port, work, campaign, os.path.join(work, "out-send-12"), ca=server.ca))
            bench.check_rows_once(os.path.join(work, "out-send-12"), rows)
            out_dir = os.path.join(work, "out-broadcast-12")
            b.append(broadcast(bench.BIN, bench.timed, bench.pinned(True), work, server.port, server.ca, updates, out_dir,
                               bench.CONNS, bench.STREAMS, bench.TOPIC, bench.KEY_ID, bench.TEAM_ID))
            bench.check_rows_once(out_dir, rows)
            bench.log(f"  send run {i + 1}: {a[-1]['rate']:.0f}/s cpu {a[-1]['cpu_s']:.2f}s; "
                      f"broadcast run {i + 1}: {b[-1]['rate']:.0f}/s cpu {b[-1]['cpu_s']:.2f}s")
    finally:
        server.stop()
    send_rate, broadcast_rate = bench.median(a, "rate"), bench.median(b, "rate")
    results["broadcast"] = {"rows": rows, "send_rate": send_rate, "broadcast_rate": broadcast_rate,
                            "ratio": broadcast_rate / send_rate, "goal": 0.9,
                            "send_cpu_s": bench.median(a, "cpu_s"), "broadcast_cpu_s": bench.median(b, "cpu_s"),
                            "runs": {"send": a, "broadcast": b}}


def table_row(results, verdict):
    r = results["broadcast"]
    return (f"12 issue 34: broadcast / send rate, {r['rows']:,} rows", f"{r['broadcast_rate']:.0f} / {r['send_rate']:.0f}/s",
            f"{r['ratio']:.3f}", ">= 0.90", verdict(r["ratio"] >= 0.9))
