#!/usr/bin/env python3
"""`make image-check`: the image archive run as containers, the way Kubernetes runs the manifests.

podman with runc (cgroupfs, its state under WORK) loads the archive and runs each pod as the kubelet
would from jobs/kubernetes/: the container's command and args from the YAML with $(VAR) expanded
from its env (JOB_COMPLETION_INDEX, the job-name label), the securityContext as podman flags
(read-only root without podman's tmpfs, no capabilities, no privilege escalation, the image's
numeric user, which runAsNonRoot needs), the memory and CPU limits, and every volume mounted where
the manifest mounts it (the PersistentVolumeClaim a host directory, the Secret's key and the
ConfigMap's job file as files). Against a mock APNs on the host's 127.0.0.1 (token auth): the
Indexed Job's three shard pods, one of them killed mid-run and started again (it resumes its
shard), then report-job.yaml, whose report step must count every campaign row once and whose cleanup
step applies the dead tokens to a SQLite file the Secret names. Also: --version,
`send --endpoint mock` inside the container, and the trust store: the image's own (with Apple's
USERTrust RSA root), a server it does not trust refused with the usual message, a bundle mounted
over /etc/ssl/certs/ca-certificates.crt and SSL_CERT_FILE naming a mounted bundle both trusted.

Environment: IMAGE (the archive), VERSION, STAGE (the host's copy of the binary runs the mock),
WORK; K8S_DIR (default jobs/kubernetes). Fails with one line saying what is wrong.
"""
import json, os, re, shutil, signal, sqlite3, subprocess, sys, time
import yaml

IMAGE, VERSION, WORK = os.environ["IMAGE"], os.environ["VERSION"], os.path.abspath(os.environ["WORK"])
HOST_BINARY = os.path.join(os.environ["STAGE"], "usr/bin/apns-bulk")
K8S_DIR = os.environ.get("K8S_DIR", "jobs/kubernetes")
KEY_ID, TEAM_ID = "ABCDE12345", "TEAM123456"
SHARDS_ROWS = 9000
USERTRUST = "/usr/share/ca-certificates/mozilla/USERTrust_RSA_Certification_Authority.crt"
started = []   # containers and processes to stop, whatever happens


def fail(message):
    print(f"image-check: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def step(message):
    print(f"image-check: {message}", file=sys.stderr, flush=True)


# podman: runc (crun does not run on hybrid cgroups), cgroupfs (no systemd), open-files limits the
# root shell may set, every piece of state under WORK.
# podman refuses a --runroot path over 50 characters: it is named through a short link in /tmp
# (removed at the end) to the directory under WORK.
STATE = os.path.join(WORK, "podman")
CONF = os.path.join(STATE, "containers.conf")
RUNROOT_LINK = f"/tmp/apns-bulk-podman-{os.getpid()}"
PODMAN = ["podman", "--root", f"{STATE}/root", "--runroot", RUNROOT_LINK, "--tmpdir", f"{STATE}/tmp",
          "--storage-driver", os.environ.get("PODMAN_STORAGE_DRIVER", "overlay")]


def podman(*args, check=True, timeout=300):
    env = dict(os.environ, CONTAINERS_CONF=CONF)
    result = subprocess.run(PODMAN + list(args), capture_output=True, text=True, env=env, timeout=timeout)
    if check and result.returncode != 0:
        fail(f"podman {' '.join(args[:2])}: {result.stderr.strip()[-600:]}")
    return result


def setup():
    shutil.rmtree(WORK, ignore_errors=True)
    for directory in ["root", "run", "tmp", "networks", "volumes"]:
        os.makedirs(f"{STATE}/{directory}")
    os.symlink(f"{STATE}/run", RUNROOT_LINK)
    with open(CONF, "w") as conf:
        conf.write(f"""[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "{STATE}/events.log"
volume_path = "{STATE}/volumes"
static_dir = "{STATE}/root/libpod"
[network]
network_config_dir = "{STATE}/networks"
""")


def load_image():
    output = podman("load", "-i", IMAGE).stdout
    match = re.search(r"Loaded image(?:\(s\))?: (\S+)", output)
    if not match:
        fail(f"podman load printed no image name: {output}")
    return match.group(1)


def check_config(image):
    config = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
    user = config.get("User", "")
    uid, _, gid = user.partition(":")
    # The kubelet verifies runAsNonRoot only for a numeric user: a name or uid 0 fails the pod.
    if not uid.isdigit() or int(uid) == 0 or (gid and not gid.isdigit()):
        fail(f"the image's user is {user or 'unset (root)'}: runAsNonRoot needs a numeric non-root user such as 65532:65532")
    if config.get("Entrypoint") != ["/usr/bin/apns-bulk"]:
        fail(f"the image's entrypoint is {config.get('Entrypoint')}, not /usr/bin/apns-bulk")
    labels = config.get("Labels") or {}
    for label in ["version", "revision", "source", "licenses", "created"]:
        if not labels.get(f"org.opencontainers.image.{label}"):
            fail(f"the image has no org.opencontainers.image.{label} label")
    if labels["org.opencontainers.image.version"] != VERSION:
        fail(f"the image's version label is {labels['org.opencontainers.image.version']}, the binary is {VERSION}")
    return int(uid)


def documents(name):
    with open(os.path.join(K8S_DIR, name)) as file:
        return [doc for doc in yaml.safe_load_all(file) if doc]


def pod_of(name):
    """The pod spec of the Job or CronJob in `name`, and the ConfigMaps beside it."""
    docs = documents(name)
    config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
    for doc in docs:
        if doc["kind"] == "Job":
            return doc["spec"]["template"]["spec"], config_maps
        if doc["kind"] == "CronJob":
            return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"], config_maps
    fail(f"{name} has no Job")


def expand(text, env):
    """$(NAME) from the container's environment, $$ a literal $, as the kubelet expands args."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


class Pod:
    """One pod of a manifest as a podman container: its flags from the YAML."""

    def __init__(self, manifest, name, env, image, volumes, container=("containers", 0)):
        spec, self.config_maps = pod_of(manifest)
        container = spec[container[0]][container[1]]
        self.name, self.image, self.manifest = name, image, manifest
        if not container["image"].endswith(f"/apns-bulk:{VERSION}"):
            fail(f"{manifest}: image {container['image']}: the image this version builds is apns-bulk:{VERSION}")
        if not container.get("command"):
            fail(f"{manifest}: the container has no command: the image's entrypoint is not part of the manifest's contract")
        self.env = dict(env)
        for variable in container.get("env", []):
            if "value" in variable:
                self.env[variable["name"]] = expand(variable["value"], self.env)
            elif variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.labels['job-name']":
                self.env[variable["name"]] = env.get("JOB_NAME", "apns-bulk-check")
            elif "secretKeyRef" in variable.get("valueFrom", {}):
                ref = variable["valueFrom"]["secretKeyRef"]
                with open(os.path.join(secret_directory(ref["name"]), ref["key"])) as file:
                    self.env[variable["name"]] = file.read()
        self.command = [expand(part, self.env) for part in container["command"]]
        self.args = [expand(arg, self.env) for arg in container.get("args", [])]
        context = dict(spec.get("securityContext", {}), **container.get("securityContext", {}))
        flags = ["--network=host"]
        if context.get("readOnlyRootFilesystem"):
            flags += ["--read-only", "--read-only-tmpfs=false"]
        if context.get("allowPrivilegeEscalation") is False:
            flags += ["--security-opt", "no-new-privileges"]
        drop = context.get("capabilities", {}).get("drop", [])
        if "ALL" in drop:
            flags += ["--cap-drop=all"]
        if "runAsUser" in context:
            flags += ["--user", f"{context['runAsUser']}:{context.get('runAsGroup', context['runAsUser'])}"]
        self.run_as_non_root = context.get("runAsNonRoot") is True
        limits = container.get("resources", {}).get("limits", {})
        if "memory" in limits:
            flags += ["--memory", limits["memory"].replace("Mi", "m").replace("Gi", "g"), "--memory-swap",
                      limits["memory"].replace("Mi", "m").replace("Gi", "g")]
        if "cpu" in limits:
            flags += ["--cpus", str(limits["cpu"])]
        sources = {v["name"]: v for v in spec.get("volumes", [])}
        for mount in container.get("volumeMounts", []):
            host = volumes(sources[mount["name"]], self)
            if "subPath" in mount:
                host = os.path.join(host, mount["subPath"])
            flags += ["-v", f"{host}:{mount['mountPath']}" + (":ro" if mount.get("readOnly") else "")]
        for key, value in self.env.items():
            flags += ["-e", f"{key}={value}"]
        self.flags = flags
        self.context = context

    def start(self, extra=()):
        podman("rm", "-f", self.name, check=False)
        started.append(self.name)
        podman("run", "-d", "--name", self.name, *self.flags, *extra,
               "--entrypoint", json.dumps(self.command), self.image, *self.args)

    def wait(self, timeout=600):
        status = podman("wait", self.name, timeout=timeout).stdout.strip()
        logs = podman("logs", self.name, check=False)
        return int(status), logs.stdout, logs.stderr


def run_in_image(image, uid, args, mounts=(), env=(), entrypoint=None, extra=()):
    """One container with the restrictions every pod here gets."""
    flags = ["--rm", "--network=host", "--read-only", "--read-only-tmpfs=false", "--cap-drop=all",
             "--security-opt", "no-new-privileges", *extra]
    for host, path in mounts:
        flags += ["-v", f"{host}:{path}"]
    for item in env:
        flags += ["-e", item]
    if entrypoint:
        flags += ["--entrypoint", entrypoint]
    return podman("run", *flags, image, *args, check=False)


def start_mock(*options):
    """The mock APNs on the host's loopback: token auth with the Secret's key, slow enough
    (one stream a connection, 5 ms an answer) that a shard pod can be killed mid-run."""
    mock_log = open(os.path.join(WORK, "mock.stdout"), "w+")
    process = subprocess.Popen([HOST_BINARY, "mock-server", "--listen", "127.0.0.1:0", "--ca-out", f"{WORK}/mock-ca.pem",
                                "--verify-key-file", f"{WORK}/secret/AuthKey.p8", "--key-id", KEY_ID, "--team-id", TEAM_ID,
                                "--max-streams", "1", "--latency-ms", "5", *options],
                               stdout=mock_log, stderr=open(os.path.join(WORK, "mock.stderr"), "w"))
    started.append(process)
    for _ in range(200):
        mock_log.seek(0)
        match = re.search(r"listening (127\.0\.0\.1:\d+)", mock_log.read())
        if match:
            return match.group(1)
        if process.poll() is not None:
            fail(f"the mock server did not start: {open(os.path.join(WORK, 'mock.stderr')).read().strip()}")
        time.sleep(0.05)
    fail("the mock server did not say where it listens")


def host(*args):
    result = subprocess.run(list(args), capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"{' '.join(args[:2])}: {result.stderr.strip()}")
    return result.stdout


def records(directory):
    text = host("zstd", "-dcq", os.path.join(directory, "results.jsonl.zst"))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main():
    setup()
    step(f"podman load {IMAGE}")
    image = load_image()
    uid = check_config(image)
    step(f"{image}: user {uid}, entrypoint /usr/bin/apns-bulk, OCI labels")

    # Files the volumes hold: the campaign volume owned by the image's user, the key as a Secret.
    data = os.path.join(WORK, "pv")
    os.makedirs(data)
    os.makedirs(f"{WORK}/secret")
    host("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{WORK}/secret/AuthKey.p8")
    os.chmod(f"{WORK}/secret/AuthKey.p8", 0o644)   # a Secret volume's files: root's, mode 0644

    version = run_in_image(image, uid, ["--version"])
    if version.returncode != 0 or version.stdout.strip() != VERSION:
        fail(f"--version in the container: {version.stdout.strip()} {version.stderr.strip()} (expected {VERSION})")
    step(f"--version: {VERSION}")

    os.chown(data, uid, uid)
    rehearsal = run_in_image(image, uid, ["gen", "--rows", "2000", "--out", "/data/rehearsal.csv.zst", "--seed", "1"],
                             mounts=[(data, "/data")])
    if rehearsal.returncode != 0:
        fail(f"gen in the container: {rehearsal.stderr.strip()}")
    send = run_in_image(image, uid, ["send", "--input", "/data/rehearsal.csv.zst", "--topic", "com.example.app",
                                     "--endpoint", "mock", "--out", "/data/out/rehearsal", "--progress", "never"],
                        mounts=[(data, "/data")], extra=["--tmpfs", "/tmp"])   # the embedded mock's CA file
    if send.returncode != 0:
        fail(f"send --endpoint mock in the container exited {send.returncode}: {send.stderr.strip()[-800:]}")
    rows = [r["row"] for r in records(f"{data}/out/rehearsal")]
    if sorted(rows) != list(range(1, 2001)):
        fail("send --endpoint mock: the result log does not hold each of the 2,000 rows once")
    step("send --endpoint mock in the container: 2,000 rows, each once in results.jsonl.zst")

    check_trust(image, uid, data)
    check_shards(image, data)
    step("passed")


def campaign_for_shards(data):
    """SHARDS_ROWS rows in /data/campaign.csv.zst, every 50th token unregistered at the mock."""
    host(HOST_BINARY, "gen", "--rows", str(SHARDS_ROWS), "--out", f"{data}/campaign.csv.zst", "--seed", "7",
         "--unregistered-rate", "0.02", "--unregistered-out", f"{WORK}/unregistered.txt")
    os.chown(f"{data}/campaign.csv.zst", 65532, 65532)


def secret_directory(name):
    """A Secret's keys as files, as its volume shows them: the key's Secret is WORK/secret."""
    return f"{WORK}/secret" if name == "apns-bulk-key" else f"{WORK}/secret-{name}"


def volume_for(config_maps, data, endpoint):
    def volume(source, pod):
        if "persistentVolumeClaim" in source:
            return data
        if "secret" in source:
            return secret_directory(source["secret"]["secretName"])
        if "emptyDir" in source:
            path = f"{WORK}/emptydir/{pod.name}/{source['name']}"
            os.makedirs(path, exist_ok=True)
            os.chmod(path, 0o777)   # emptyDir: writable by the pod's user
            return path
        if "configMap" in source:
            path = f"{WORK}/configmap/{source['configMap']['name']}"
            os.makedirs(path, exist_ok=True)
            for key, text in pod.config_maps[source["configMap"]["name"]].items():
                # The job file's endpoint: the mock on the host, its CA mounted with the Secret.
                text = re.sub(r'(?m)^endpoint = .*$', f'endpoint = "{endpoint}"\nca-file = "/etc/apns-bulk/keys/mock-ca.pem"', text)
                with open(os.path.join(path, key), "w") as file:
                    file.write(text)
            return path
        fail(f"{pod.manifest}: volume {source['name']}: a kind this check does not mount")
    return volume


def check_shards(image, data):
    campaign_for_shards(data)
    endpoint = start_mock("--unregistered-file", f"{WORK}/unregistered.txt")
    shutil.copy(f"{WORK}/mock-ca.pem", f"{WORK}/secret/mock-ca.pem")
    spec, config_maps = pod_of("indexed-job.yaml")
    job = next(d for d in documents("indexed-job.yaml") if d["kind"] == "Job")
    shards = job["spec"]["completions"]
    volume = volume_for(config_maps, data, endpoint)
    pods = [Pod("indexed-job.yaml", f"apns-bulk-shards-{k}", {"JOB_COMPLETION_INDEX": str(k)}, image, volume)
            for k in range(shards)]
    step(f"indexed-job.yaml: {shards} shard pods: {' '.join(pods[0].command + pods[0].args)}")
    for pod in pods:
        pod.start()
    # Pod 1 is killed mid-run (as an OOM kill or a lost node would) and started again.
    time.sleep(2)
    killed = podman("kill", "--signal", "KILL", pods[1].name, check=False)
    if killed.returncode != 0:
        status, _, stderr = pods[1].wait()
        if status != 0:
            fail(f"shard pod 1 exited {status}: {stderr.strip()[-800:]}")
        fail("shard pod 1 finished within 2 s, before it could be killed: the check's campaign is too small")
    status, _, stderr = pods[1].wait()
    if status != 137:
        fail(f"the killed shard pod exited {status}, not 137: {stderr[-400:]}")
    for index, pod in enumerate(pods):
        if index == 1:
            continue
        status, _, stderr = pod.wait()
        if status != 0:
            fail(f"shard pod {index} exited {status}: {stderr.strip()[-800:]}")
    step("shard pod 1 killed mid-run (137); started again with the same command")
    pods[1].start()
    status, stdout, stderr = pods[1].wait()
    if status != 0:
        fail(f"the restarted shard pod 1 exited {status}: {stderr.strip()[-800:]}")
    carried = re.search(r"resumed: (\d+) rows were recorded by earlier runs", stdout)
    if not carried or int(carried.group(1)) == 0:
        fail(f"the restarted shard pod 1 did not resume its shard: {stdout[-400:]} {stderr[-400:]}")
    step(f"shard pod 1 started again resumed its shard: {carried.group(0)}")
    seen = {}
    for index in range(shards):
        out = pods[index].args[pods[index].args.index("--out") + 1].replace("/data", data, 1)
        for record in records(out):
            if record["row"] in seen:
                fail(f"row {record['row']} in shard {seen[record['row']]}'s and shard {index}'s logs")
            seen[record["row"]] = index
    if sorted(seen) != list(range(1, SHARDS_ROWS + 1)):
        fail(f"the shards' logs hold {len(seen)} distinct rows of {SHARDS_ROWS}")
    step(f"the {shards} shards' logs hold each of the {SHARDS_ROWS} rows once")

    report = Pod("report-job.yaml", "apns-bulk-report", {}, image, volume, container=("initContainers", 0))
    step(f"report-job.yaml, init container: {' '.join(report.command + report.args)}")
    report.start()
    status, stdout, stderr = report.wait()
    total = next((line for line in stdout.splitlines() if line.startswith("total: ")), "")
    if status != 0 or not total.startswith(f"total: rows {SHARDS_ROWS} "):
        fail(f"the report step exited {status}, total line {total!r}: {stderr.strip()[-600:]}")
    if "warning" in stderr:
        fail(f"the report step warned: {stderr.strip()[-600:]}")
    step(f"the report step: {total}")
    check_cleanup(image, data, volume)


def check_cleanup(image, data, volume):
    """report-job.yaml's cleanup step, its Secret naming a SQLite file on the volume: of the app's
    rows of each dead token, the one registered again since APNs' unregistered_at stays."""
    dead = [line.split(",")[0] for line in open(f"{data}/out/dead-tokens.csv").read().splitlines()[1:]]
    if not dead:
        fail("the merged dead-token list is empty: the cleanup step has nothing to do")
    database = f"{data}/devices.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL, topic TEXT NOT NULL, "
                           "registered_at TEXT)")
        connection.execute("CREATE INDEX devices_token ON devices (token)")
        for index, token in enumerate(dead):
            registered = "2000-01-01 00:00:00" if index % 2 == 0 else "2100-01-01T00:00:00.000Z"
            connection.execute("INSERT INTO devices (token, topic, registered_at) VALUES (?, 'com.example.app', ?)",
                               (token, registered))
    connection.close()
    os.chown(database, 65532, 65532)
    os.makedirs(secret_directory("apns-bulk-database"))
    with open(f"{secret_directory('apns-bulk-database')}/url", "w") as file:
        file.write("sqlite:/data/devices.db")
    with open(f"{secret_directory('apns-bulk-database')}/password", "w") as file:
        file.write("not used by SQLite\n")
    cleanup = Pod("report-job.yaml", "apns-bulk-cleanup", {}, image, volume)
    step(f"report-job.yaml, container: {' '.join(cleanup.command + cleanup.args)}")
    cleanup.start()
    status, stdout, stderr = cleanup.wait()
    if status != 0:
        fail(f"the cleanup step exited {status}: {stdout.strip()[-300:]} {stderr.strip()[-600:]}")
    with sqlite3.connect(database) as connection:
        left = connection.execute("SELECT count(*) FROM devices").fetchone()[0]
    connection.close()
    if left != len(dead) // 2:
        fail(f"the cleanup step left {left} of {len(dead)} rows; {len(dead) // 2} were registered again and stay")
    step(f"the cleanup step: {stdout.strip()}")


def check_trust(image, uid, data):
    bundle = run_in_image(image, uid, ["/etc/ssl/certs/ca-certificates.crt"], entrypoint="/bin/cat")
    if bundle.returncode != 0 or "BEGIN CERTIFICATE" not in bundle.stdout:
        fail(f"the image has no CA store at /etc/ssl/certs/ca-certificates.crt: {bundle.stderr.strip()}")
    if os.path.exists(USERTRUST):
        body = "".join(line for line in open(USERTRUST) if not line.startswith("-----")).replace("\n", "")
        if body not in bundle.stdout.replace("\n", ""):
            fail("the image's CA store lacks the USERTrust RSA root that APNs' servers chain to")
    step("the image's CA store /etc/ssl/certs/ca-certificates.crt holds the USERTrust RSA root")
    endpoint = start_mock()
    os.makedirs(f"{WORK}/trust")
    shutil.copy(f"{WORK}/mock-ca.pem", f"{WORK}/trust/bundle.pem")
    host(HOST_BINARY, "gen", "--rows", "50", "--out", f"{data}/trust.csv", "--seed", "3")
    base = ["send", "--input", "/data/trust.csv", "--topic", "com.example.app", "--endpoint", endpoint,
            "--key-file", "/etc/apns-bulk/keys/AuthKey.p8", "--key-id", KEY_ID, "--team-id", TEAM_ID, "--progress", "never"]
    key = (f"{WORK}/secret", "/etc/apns-bulk/keys")
    refused = run_in_image(image, uid, base + ["--out", "/data/out/untrusted"], mounts=[(data, "/data"), key])
    if refused.returncode == 0 or "could not be verified" not in refused.stdout + refused.stderr:
        fail(f"a server the image does not trust was not refused with the usual message: {refused.stdout[-400:]} {refused.stderr[-400:]}")
    step("a server outside the image's CA store is refused: certificate ... could not be verified")
    mounted = run_in_image(image, uid, base + ["--out", "/data/out/mounted-bundle"],
                           mounts=[(data, "/data"), key, (f"{WORK}/trust/bundle.pem", "/etc/ssl/certs/ca-certificates.crt")])
    if mounted.returncode != 0:
        fail(f"a bundle mounted over /etc/ssl/certs/ca-certificates.crt is not trusted: {mounted.stderr.strip()[-600:]}")
    named = run_in_image(image, uid, base + ["--out", "/data/out/ssl-cert-file"],
                         mounts=[(data, "/data"), key, (f"{WORK}/trust", "/etc/apns-bulk/trust")],
                         env=["SSL_CERT_FILE=/etc/apns-bulk/trust/bundle.pem"])
    if named.returncode != 0:
        fail(f"SSL_CERT_FILE naming a mounted bundle is not trusted: {named.stderr.strip()[-600:]}")
    step("a bundle mounted over /etc/ssl/certs/ca-certificates.crt, and SSL_CERT_FILE naming one, are trusted")
    stop_processes()


def stop_processes():
    while started:
        item = started.pop()
        if isinstance(item, subprocess.Popen):
            item.send_signal(signal.SIGTERM)
            try:
                item.wait(timeout=10)
            except subprocess.TimeoutExpired:
                item.kill()
        else:
            podman("rm", "-f", "-t", "0", item, check=False)


if __name__ == "__main__":
    try:
        main()
    finally:
        stop_processes()
        if os.path.islink(RUNROOT_LINK):
            os.unlink(RUNROOT_LINK)
