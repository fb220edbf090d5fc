"""Scenario 11 (issue 33): `apns-bulk cleanup` applies 100,000 dead tokens to a 1,000,000-row device
table, on PostgreSQL and on SQLite; goal <= 10 s on PostgreSQL.

The table: `devices(id, token, topic, registered_at)` with a btree index on `token`, row i's token the
SHA-256 of i in hex and its registered_at 2025-01-01 + i seconds. The list: the tokens of every 10th
row (90,000 lines, their unregistered_at 2025-01-01 + 450,000 s, so half were registered again
after it and are kept) and 10,000 tokens the table does not hold. PostgreSQL is a private cluster
(Debian's server binaries, initdb into the run's temporary directory, 127.0.0.1, its default
durability); SQLite a file, registered_at in ISO 8601. Each run starts from the same table; the
whole `cleanup` process is timed, start to exit, and its --json counts are checked.
"""
import glob
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import datetime

TABLE_ROWS = int(os.environ.get("BENCH_CLEANUP_ROWS", "1000000"))
DEAD_PRESENT = TABLE_ROWS // 10 * 9 // 10
DEAD_ABSENT = TABLE_ROWS // 100
EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
UNREGISTERED_OFFSET_S = TABLE_ROWS * 9 // 20


def token(i):
    return hashlib.sha256(str(i).encode()).hexdigest()


def write_list(work):
    """The dead-token list, as `send` writes it; returns its path and the counts a run must report."""
    path = os.path.join(work, "dead-tokens.csv")
    at = (EPOCH + datetime.timedelta(seconds=UNREGISTERED_OFFSET_S)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with open(path, "w") as f:
        f.write("device_token,reason,status,unregistered_at,row\n")
        for n in range(DEAD_PRESENT):
            f.write(f"{token(n * 10)},Unregistered,410,{at},{n + 1}\n")
        for n in range(DEAD_ABSENT):
            f.write(f"{hashlib.sha256(f'absent-{n}'.encode()).hexdigest()},Unregistered,410,{at},{DEAD_PRESENT + n + 1}\n")
    # Row n*10 was registered at n*10 s: earlier than the list's instant (affected) below it.
    affected = sum(1 for n in range(DEAD_PRESENT) if n * 10 < UNREGISTERED_OFFSET_S)
    return path, {"matched": DEAD_PRESENT, "affected": affected, "kept_registered_after": DEAD_PRESENT - affected,
                  "not_found": DEAD_ABSENT}


class PostgresCluster:
    """initdb + pg_ctl into a directory of its own under /tmp (the run's directory is root's alone),
    as `postgres` when root (PostgreSQL refuses root); `stop()` removes it."""

    def __init__(self, port):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
        if not bins:
            raise RuntimeError("no PostgreSQL server in /usr/lib/postgresql; `make bench-deps` installs it")
        directory = tempfile.mkdtemp(prefix="apns-bulk-bench-pg-")
        self.bin, self.dir, self.port = os.path.dirname(bins[-1]), directory, port
        self.password = "bench-" + os.urandom(6).hex()
        with open(os.path.join(directory, "password"), "w") as f:
            f.write(self.password)
        if os.getuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", directory], check=True)
        self._as_server(["initdb", "-D", self.data, "-U", "bench", "--pwfile=" + os.path.join(directory, "password"),
                         "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-instructions"])
        self._as_server(["pg_ctl", "start", "-D", self.data, "-l", os.path.join(directory, "server.log"), "-w",
                         "-o", f"-p {port} -k {directory} -c listen_addresses=127.0.0.1"])

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    @property
    def url(self):
        return f"postgresql://bench@127.0.0.1:{self.port}/postgres"

    def _as_server(self, argv):
        prefix = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        p = subprocess.run(prefix + [os.path.join(self.bin, argv[0])] + argv[1:], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{argv[0]} exited {p.returncode}: {p.stderr[-2000:]}")

    def sql(self, statements):
        return subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                               "-h", "127.0.0.1", "-p", str(self.port), "-U", "bench", "-d", "postgres", "-c", statements],
                              check=True, capture_output=True, text=True, env=self.env).stdout

    @property
    def env(self):
        return dict(os.environ, PGPASSWORD=self.password)

    def stop(self):
        try:
            self._as_server(["pg_ctl", "stop", "-D", self.data, "-m", "immediate", "-w"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def fill_postgres(cluster):
    cluster.sql(f"""
        DROP TABLE IF EXISTS devices;
        CREATE TABLE devices (id bigint PRIMARY KEY, token text NOT NULL, topic text NOT NULL, registered_at timestamptz);
        INSERT INTO devices SELECT i, encode(sha256(i::text::bytea), 'hex'), 'com.example.bench',
                                   '2025-01-01 00:00:00+00'::timestamptz + i * interval '1 second'
          FROM generate_series(0, {TABLE_ROWS - 1}) AS i;
        CREATE INDEX devices_token ON devices (token);""")
    cluster.sql("VACUUM ANALYZE devices")


def fill_sqlite(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL, topic TEXT NOT NULL, "
                   "registered_at TEXT)")
        db.executemany("INSERT INTO devices VALUES (?, ?, 'com.example.bench', ?)",
                       ((i, token(i), (EPOCH + datetime.timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z"))
                        for i in range(TABLE_ROWS)))
        db.execute("CREATE INDEX devices_token ON devices (token)")
        db.execute("ANALYZE")
    db.close()


def cleanup(bin_path, timed, dead_list, database, expected, env=None):
    cmd = [bin_path, "cleanup", "--dead-tokens", dead_list, "--database", database, "--table", "devices",
           "--token-column", "token", "--registered-at-column", "registered_at", "--json"]
    out, _, wall, cpu, rss = timed(cmd, env=env)
    counts = json.loads(out.strip().splitlines()[-1])
    got = {k: counts.get(k) for k in expected}
    if got != expected:
        raise RuntimeError(f"cleanup {database.split(':')[0]}: counts {got}, {expected} expected")
    return {"wall_s": wall, "cpu_s": cpu, "rss_kib": rss, "counts": counts}


def scenario_cleanup(work, results, bin_path, runs, timed, log, free_port):
    log(f"scenario 11: cleanup, {DEAD_PRESENT + DEAD_ABSENT} dead tokens x {TABLE_ROWS} rows, "
        f"PostgreSQL and SQLite, {runs} runs each")
    dead_list, expected = write_list(work)
    pg_runs, sqlite_runs = [], []
    cluster = PostgresCluster(free_port())
    try:
        for i in range(runs):
            fill_postgres(cluster)
            pg_runs.append(cleanup(bin_path, timed, dead_list, cluster.url, expected, env=cluster.env))
            log(f"  PostgreSQL run {i + 1}: {pg_runs[-1]['wall_s']:.2f}s (cpu {pg_runs[-1]['cpu_s']:.2f}s)")
    finally:
        cluster.stop()
    master = os.path.join(work, "devices-master.sqlite")
    fill_sqlite(master)
    for i in range(runs):
        path = os.path.join(work, "devices.sqlite")
        shutil.copyfile(master, path)
        sqlite_runs.append(cleanup(bin_path, timed, dead_list, "sqlite:" + path, expected))
        log(f"  SQLite     run {i + 1}: {sqlite_runs[-1]['wall_s']:.2f}s (cpu {sqlite_runs[-1]['cpu_s']:.2f}s)")
    median = lambda rs: sorted(r["wall_s"] for r in rs)[len(rs) // 2]
    results["cleanup"] = {"table_rows": TABLE_ROWS, "dead_tokens": DEAD_PRESENT + DEAD_ABSENT, "expected": expected,
                          "postgresql_wall_s": median(pg_runs), "sqlite_wall_s": median(sqlite_runs),
                          "goal_postgresql_s": 10, "runs": {"postgresql": pg_runs, "sqlite": sqlite_runs}}


def table_row(results, verdict):
    c = results["cleanup"]
    return (f"11 issue 33: cleanup {c['dead_tokens']:,} tokens x {c['table_rows']:,} rows, PostgreSQL / SQLite",
            f"{c['postgresql_wall_s']:.2f} / {c['sqlite_wall_s']:.2f} s", "", "<= 10 s PG",
            verdict(c["postgresql_wall_s"] <= 10))
