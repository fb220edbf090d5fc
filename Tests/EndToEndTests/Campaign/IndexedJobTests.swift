import Foundation
import Testing
import TestSupport

/// jobs/kubernetes/indexed-job.yaml and report-job.yaml: valid Kubernetes objects, and their
/// commands run as the pods would run them (3 shard processes side by side, each with its
/// JOB_COMPLETION_INDEX, against one mock APNs on loopback), then the report step over the logs.
@Suite(.serialized) struct IndexedJobTests {
    static let shards = 3
    /// Where `make image` installs the binary, and the numeric user it runs as.
    static let imageBinary = "/usr/bin/apns-bulk"
    static let imageUser = 65532

    @Test func theIndexedJobAndTheReportJobAreValidKubernetesObjectsThatFitEachOther() throws {
        let docs = try KubernetesManifests.load(["indexed-job.yaml", "report-job.yaml", "cronjob.yaml"])
        let value = KubernetesManifests.value
        let job = try #require(docs.first { $0.file == "indexed-job.yaml" && $0.doc["kind"] as? String == "Job" }?.doc)
        let spec = try #require(job["spec"] as? [String: Any])
        #expect(spec["completionMode"] as? String == "Indexed")
        #expect(spec["completions"] as? Int == Self.shards && spec["parallelism"] as? Int == Self.shards)
        #expect((spec["backoffLimitPerIndex"] as? Int ?? 0) >= 1, "a crashed shard is retried (and resumes)")
        let pod = try #require(value(spec, "template", "spec") as? [String: Any])
        #expect(pod["restartPolicy"] as? String == "Never")
        let container = try #require(value(pod, "containers", 0) as? [String: Any])
        let args = try #require(container["args"] as? [String])
        #expect(args.first == "send")
        #expect(Self.flag("--shard", in: args) == "$(JOB_COMPLETION_INDEX)/\(Self.shards)")
        #expect(Self.flag("--out", in: args)?.contains("$(JOB_COMPLETION_INDEX)") == true, "an --out per shard")
        #expect(args.contains("--resume"), "a pod that replaces a crashed one continues its shard")
        let limit = try #require(value(container, "resources", "limits", "memory") as? String)
        let request = try #require(value(container, "resources", "requests", "memory") as? String)
        #expect(Self.mebibytes(request) >= 64 && Self.mebibytes(limit) >= Self.mebibytes(request) && Self.mebibytes(limit) <= 512)
        let volumes = try #require(pod["volumes"] as? [[String: Any]])
        #expect(volumes.contains { value($0, "persistentVolumeClaim", "claimName") != nil }, "a shared volume")
        #expect(volumes.contains { value($0, "secret", "secretName") != nil }, "credentials from a Secret")
        let configMapName = try #require(volumes.compactMap { value($0, "configMap", "name") as? String }.first)
        #expect(docs.contains { $0.doc["kind"] as? String == "ConfigMap" && value($0.doc, "metadata", "name") as? String == configMapName })

        // The report step reads every shard's log once, where the shards write them.
        let report = try #require(docs.first { $0.file == "report-job.yaml" }?.doc)
        let reportPod = try #require(value(report, "spec", "template", "spec") as? [String: Any])
        let reportArgs = try #require(value(reportPod, "initContainers", 0, "args") as? [String])
        #expect(reportArgs.first == "report")
        let out = try #require(Self.flag("--out", in: args))
        let logs = (0..<Self.shards).map { out.replacingOccurrences(of: "$(JOB_COMPLETION_INDEX)", with: "\($0)") + "/results.jsonl.zst" }
        #expect(Array(reportArgs.dropFirst().prefix(Self.shards)) == logs)
        let deadTokens = try #require(Self.flag("--dead-tokens", in: reportArgs))

        // Then the cleanup step applies that list, its database named by a Secret, the password a
        // file of that Secret (never on the command line), guarded by --max-affected.
        let cleanup = try #require(value(reportPod, "containers", 0) as? [String: Any])
        let cleanupArgs = try #require(cleanup["args"] as? [String])
        #expect(cleanupArgs.first == "cleanup")
        #expect(Self.flag("--dead-tokens", in: cleanupArgs) == deadTokens)
        #expect(Self.flag("--database", in: cleanupArgs) == "$(DATABASE_URL)")
        let secret = try #require(value(cleanup, "env", 0, "valueFrom", "secretKeyRef", "name") as? String)
        #expect(value(cleanup, "env", 0, "name") as? String == "DATABASE_URL")
        let passwordFile = try #require(Self.flag("--password-file", in: cleanupArgs))
        let mounts = try #require(cleanup["volumeMounts"] as? [[String: Any]])
        let secretMount = try #require(mounts.first { passwordFile.hasPrefix(($0["mountPath"] as? String ?? "-") + "/") })
        let reportVolumes = try #require(reportPod["volumes"] as? [[String: Any]])
        #expect(reportVolumes.contains { $0["name"] as? String == secretMount["name"] as? String
                                    && value($0, "secret", "secretName") as? String == secret })
        #expect(Self.flag("--max-affected", in: cleanupArgs) != nil)
    }

    /// Every manifest runs the image `make image` builds as it is built: the image of this version,
    /// its binary named by `command` (not left to an entrypoint), a numeric non-root user that
    /// runAsNonRoot can verify, a read-only root filesystem, no privilege escalation and no
    /// capabilities, and memory limits (`make image-check` runs them so).
    @Test func everyManifestRunsTheImagesBinaryAsANonRootUserOnAReadOnlyRoot() throws {
        let version = try Binary.run(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let value = KubernetesManifests.value
        let docs = try KubernetesManifests.load(["indexed-job.yaml", "report-job.yaml", "cronjob.yaml"])
        let pods = docs.compactMap { entry -> (file: String, pod: [String: Any])? in
            let template = entry.doc["kind"] as? String == "CronJob"
                ? value(entry.doc, "spec", "jobTemplate", "spec", "template", "spec")
                : value(entry.doc, "spec", "template", "spec")
            return (template as? [String: Any]).map { (entry.file, $0) }
        }
        #expect(Set(pods.map(\.file)) == ["indexed-job.yaml", "report-job.yaml", "cronjob.yaml"])
        for (file, pod) in pods {
            #expect(value(pod, "securityContext", "runAsNonRoot") as? Bool == true, "\(file)")
            #expect(value(pod, "securityContext", "runAsUser") as? Int == Self.imageUser, "\(file): the image's user")
            #expect(value(pod, "securityContext", "fsGroup") as? Int == Self.imageUser, "\(file): reads the Secret, writes /data")
            let containers = (pod["initContainers"] as? [[String: Any]] ?? []) + (pod["containers"] as? [[String: Any]] ?? [])
            try #require(!containers.isEmpty, "\(file)")
            for container in containers {
                #expect(container["image"] as? String == "registry.example.com/apns-bulk:\(version)", "\(file)")
                #expect(container["command"] as? [String] == [Self.imageBinary], "\(file)")
                #expect(value(container, "securityContext", "readOnlyRootFilesystem") as? Bool == true, "\(file)")
                #expect(value(container, "securityContext", "allowPrivilegeEscalation") as? Bool == false, "\(file)")
                #expect(value(container, "securityContext", "capabilities", "drop") as? [String] == ["ALL"], "\(file)")
                #expect(value(container, "resources", "limits", "memory") != nil, "\(file)")
                // Writable paths are volumes: the one that is written is the campaign volume at /data.
                let mounts = try #require(container["volumeMounts"] as? [[String: Any]])
                let writable = mounts.filter { $0["readOnly"] as? Bool != true }.compactMap { $0["mountPath"] as? String }
                #expect(writable == ["/data"], "\(file): \(writable)")
            }
        }
    }

    /// The pods' command lines, expanded as the kubelet would, run side by side: the shards'
    /// logs hold every campaign row once between them, copies of a token (one in upper case) went
    /// to one shard, and the report step totals exactly the campaign and merges the dead tokens.
    @Test func threeShardPodsSendTheCampaignOnceAndTheReportStepTotalsIt() throws {
        let scratch = try TemporaryDirectory()
        let docs = try KubernetesManifests.load(["indexed-job.yaml", "report-job.yaml"])
        let value = KubernetesManifests.value
        let job = try #require(docs.first { $0.doc["kind"] as? String == "Job" && $0.file == "indexed-job.yaml" }?.doc)
        let args = try #require(value(job, "spec", "template", "spec", "containers", 0, "args") as? [String])
        // The image's binary is the one this build made.
        try #require(value(job, "spec", "template", "spec", "containers", 0, "command") as? [String] == [Self.imageBinary])
        let toml = try #require(docs.compactMap { value($0.doc, "data", "campaign.toml") as? String }.first)
        let reportPod = docs.first { $0.file == "report-job.yaml" }?.doc
        let reportArgs = try #require(value(reportPod, "spec", "template", "spec", "initContainers", 0, "args") as? [String])
        let cleanupArgs = try #require(value(reportPod, "spec", "template", "spec", "containers", 0, "args") as? [String])

        // The container's paths, on the test's scratch directory: the volume at /data, the
        // Secret's key and the ConfigMap's job file under /etc/apns-bulk.
        let root = scratch.path("pod")
        func rewrite(_ text: String) -> String {
            text.replacingOccurrences(of: "/data/", with: root + "/data/")
                .replacingOccurrences(of: "/etc/apns-bulk/", with: root + "/etc/apns-bulk/")
        }
        for directory in ["data", "etc/apns-bulk/keys"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        let key = try scratch.signingKey()
        try FileManager.default.copyItem(atPath: key, toPath: root + "/etc/apns-bulk/keys/AuthKey.p8")
        let (csv, rows, pairs, unregistered, deadRows) = Self.campaign()
        try Data(csv.utf8).write(to: URL(fileURLWithPath: root + "/data/campaign.csv"))
        try #require(try Command.run("/usr/bin/zstd", ["-q", root + "/data/campaign.csv", "-o", root + "/data/campaign.csv.zst"]).status == 0)
        let unregisteredFile = try scratch.write("unregistered.txt",
                                                 unregistered.map { $0 + "," + Self.unregisteredAt }.joined(separator: "\n") + "\n")
        let keyID = try #require(Self.tomlString("key-id", in: toml)), teamID = try #require(Self.tomlString("team-id", in: toml))
        let mock = try MockServerProcess(scratch: scratch, keyFile: key, extra: ["--unregistered-file", unregisteredFile],
                                         authentication: ["--verify-key-file", key, "--key-id", keyID, "--team-id", teamID])
        defer { mock.stop() }
        // The ConfigMap's job file, sending to the mock instead of production.
        let jobFile = rewrite(toml).replacingOccurrences(of: "endpoint = \"production\"",
                                                         with: "endpoint = \"\(mock.endpoint)\"\nca-file = \"\(mock.caFile)\"")
        try #require(jobFile.contains(mock.endpoint))
        try Data(jobFile.utf8).write(to: URL(fileURLWithPath: root + "/etc/apns-bulk/campaign.toml"))

        let command = KubernetesManifests.shellCommand(executable: Binary.url.path, args: args, rewrite: rewrite)
        let pods = try (0..<Self.shards).map { try Self.startPod(command, index: $0, scratch: scratch) }
        for (index, pod) in pods.enumerated() {
            pod.waitUntilExit()
            let stderr = (try? String(contentsOfFile: scratch.path("pod-\(index).stderr"), encoding: .utf8)) ?? ""
            #expect(pod.terminationStatus == 0, "pod \(index): \(stderr)")
        }

        var shardOfRow: [Int: Int] = [:]
        var tokenOfRow: [Int: String] = [:]
        var duplicateOf: [Int: Int] = [:]
        var deadLines = Set<String>()
        for index in 0..<Self.shards {
            let run = CampaignRun(result: Binary.Result(status: 0, stdout: "", stderr: ""),
                                  outDirectory: root + "/data/out/shard-\(index)")
            let records = try run.records
            let summary = try run.summary
            #expect(summary["shard"] as? String == "\(index)/\(Self.shards)")
            #expect(summary["rows"] as? Int == records.count, "a shard's summary counts its own rows")
            #expect(CampaignRun.outcomes.reduce(0) { $0 + (summary[$1] as? Int ?? 0) } == records.count)
            #expect(records.count > rows / 6, "FNV-1a spreads the rows over the shards")
            for record in records {
                let row = try #require(record["row"] as? Int)
                #expect(shardOfRow.updateValue(index, forKey: row) == nil, "row \(row) in two shards' logs")
                tokenOfRow[row] = record["device_token"] as? String
                if record["reason"] as? String == "DuplicateToken" { duplicateOf[row] = record["duplicate_of"] as? Int }
            }
            deadLines.formUnion(try run.deadTokens.map { $0.joined(separator: ",") })
        }
        #expect(Set(shardOfRow.keys) == Set(1...rows), "the shards' logs hold every campaign row once")
        for (lower, upper) in pairs {
            #expect(shardOfRow[lower] != nil && shardOfRow[lower] == shardOfRow[upper], "rows \(lower) and \(upper), one token")
            #expect(tokenOfRow[upper] == tokenOfRow[lower]?.uppercased(), "the record keeps the token as given")
            #expect(duplicateOf[upper] == lower, "row \(upper) is rejected DuplicateToken naming row \(lower)")
        }

        // The report step over the three logs.
        let reportCommand = KubernetesManifests.shellCommand(executable: Binary.url.path, args: reportArgs, rewrite: rewrite)
        let report = try Command.run("/bin/sh", ["-c", reportCommand])
        #expect(report.status == 0, "\(report.stderr)")
        let total = try #require(report.stdout.split(separator: "\n").first { $0.hasPrefix("total: ") })
        #expect(total.hasPrefix("total: rows \(rows) "), "\(total)")
        #expect(!report.stderr.contains("warning"), "\(report.stderr)")
        let mergedPath = rewrite(try #require(Self.flag("--dead-tokens", in: reportArgs)))
        let merged = try String(contentsOfFile: mergedPath, encoding: .utf8).split(separator: "\n").dropFirst().map(String.init)
        #expect(Set(merged) == deadLines && merged.count == deadLines.count, "the merged list is the shards' lists")
        #expect(deadLines.count == deadRows, "each unregistered row once: its copies are duplicates")

        // The cleanup step applies the merged list to the app's device table (a SQLite file here, its
        // URL from the Secret as the pod's environment): of the app's rows of a dead token, the one
        // registered again after APNs' unregistered_at is kept; another app's row of it is untouched.
        let database = root + "/data/devices.db"
        var sql = "CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL, topic TEXT NOT NULL, registered_at TEXT);"
            + "CREATE INDEX devices_token ON devices (token);"
        for (index, token) in unregistered.enumerated() {
            let registered = index % 2 == 0 ? "2025-06-01 10:00:00.000000" : "2026-01-05T00:00:00.000Z"
            sql += "INSERT INTO devices (token, topic, registered_at) VALUES ('\(token)', 'com.example.app', '\(registered)'),"
                + "('\(token)', 'com.example.other', '2025-06-01 10:00:00');"
        }
        sql += "INSERT INTO devices (token, topic, registered_at) VALUES ('\(String(repeating: "ab", count: 32))', 'com.example.app', NULL);"
        try #require(try Command.run("/usr/bin/sqlite3", [database, sql]).status == 0)
        try FileManager.default.createDirectory(atPath: root + "/etc/apns-bulk/database", withIntermediateDirectories: true)
        try Data("not used by SQLite\n".utf8).write(to: URL(fileURLWithPath: root + "/etc/apns-bulk/database/password"))
        var cleanupEnvironment = ProcessInfo.processInfo.environment
        cleanupEnvironment["DATABASE_URL"] = "sqlite:" + database
        let cleanupCommand = KubernetesManifests.shellCommand(executable: Binary.url.path, args: cleanupArgs, rewrite: rewrite)
        let cleanup = try Command.run("/bin/sh", ["-c", cleanupCommand], environment: cleanupEnvironment)
        #expect(cleanup.status == 0, "\(cleanup.stderr)")
        let left = try Command.run("/usr/bin/sqlite3", [database, "SELECT topic, count(*) FROM devices GROUP BY topic ORDER BY topic"])
        let deleted = (unregistered.count + 1) / 2
        #expect(left.stdout == "com.example.app|\(unregistered.count - deleted + 1)\ncom.example.other|\(unregistered.count)\n")
        let audit = try String(contentsOfFile: rewrite(try #require(Self.flag("--audit-out", in: cleanupArgs))), encoding: .utf8)
        #expect(audit.split(separator: "\n").count == deleted + 1, "the audit lists each deleted row under its header")

        // A pod restarted after its shard finished: the same command says so and exits 0.
        let again = try Command.run("/bin/sh", ["-c", command], environment: Self.podEnvironment(index: 1))
        #expect(again.status == 0 && again.stdout.contains("already finished"), "\(again.stderr)")
    }

    /// 900 rows: tokens, some listed again in upper case (`pairs`: lower row, upper row), every
    /// 30th unregistered at the mock, and rows with nothing to hash (an empty token, a wrong field
    /// count, a bad token).
    static func campaign() -> (csv: String, rows: Int, pairs: [(Int, Int)], unregistered: [String], deadRows: Int) {
        var lines = ["device_token,payload"]
        var pairs: [(Int, Int)] = []
        var unregistered: [String] = []
        var deadRows = 0
        func token(_ seed: Int) -> String {
            var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15
            return (0..<4).map { _ -> String in
                state = (state ^ (state >> 31)) &* 0xBF58_476D_1CE4_E5B9
                let hex = String(state, radix: 16)
                return String(repeating: "0", count: 16 - hex.count) + hex
            }.joined()
        }
        let payload = #""{""aps"":{""alert"":""hi""}}""#
        for seed in 1...880 {
            let value = token(seed)
            lines.append(value + "," + payload)
            if seed % 30 == 0 {
                unregistered.append(value)
                deadRows += 1
            }
            if seed % 40 == 0 {
                lines.append(value.uppercased() + "," + payload)
                pairs.append((lines.count - 2, lines.count - 1))
                // Its upper-case copy is not sent again: rejected DuplicateToken, never a dead token.
            }
        }
        lines.append("," + payload)
        lines.append("0123," + payload + ",extra")
        lines.append("zz," + payload)
        return (lines.joined(separator: "\n") + "\n", lines.count - 1, pairs, unregistered, deadRows)
    }

    /// APNs' 410 timestamp of the campaign's unregistered tokens (2025-12-22T16:46:28.279Z).
    static let unregisteredAt = "1766422588279"

    static func podEnvironment(index: Int) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["JOB_COMPLETION_INDEX"] = "\(index)"
        return environment
    }

    static func startPod(_ command: String, index: Int, scratch: TemporaryDirectory) throws -> Process {
        try Command.start("/bin/sh", ["-c", command], environment: podEnvironment(index: index),
                          standardError: Command.outputFile(scratch.path("pod-\(index).stderr")))
    }

    static func flag(_ name: String, in args: [String]) -> String? {
        guard let index = args.firstIndex(of: name), index + 1 < args.count else { return nil }
        return args[index + 1]
    }

    static func tomlString(_ key: String, in toml: String) -> String? {
        for line in toml.split(separator: "\n") where line.hasPrefix(key + " = \"") {
            return String(line.dropFirst(key.count + 4).dropLast())
        }
        return nil
    }

    static func mebibytes(_ quantity: String) -> Int {
        if quantity.hasSuffix("Mi") { return Int(quantity.dropLast(2)) ?? 0 }
        if quantity.hasSuffix("Gi") { return (Int(quantity.dropLast(2)) ?? 0) * 1024 }
        return 0
    }
}
