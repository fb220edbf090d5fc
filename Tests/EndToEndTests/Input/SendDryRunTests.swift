import Foundation
import Testing
import TestSupport

/// `send --dry-run` through the built binary: the rows a real run rejects, for the same reasons,
/// with no connection to anything, and credentials checked offline.
@Suite(.serialized) struct SendDryRunTests {
    /// A TCP port on 127.0.0.1 that listens and never accepts: a connection attempt would wait in
    /// its backlog, where `waiting` finds it.
    final class SilentListener {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
                }
            }
            try #require(bound, "cannot listen on 127.0.0.1: errno \(errno)")
            port = Int(UInt16(bigEndian: address.sin_port))
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        deinit { close(fd) }

        /// Connections made to the port so far (accepted here and closed).
        func waiting() -> Int {
            var count = 0
            while case let client = accept(fd, nil, nil), client >= 0 {
                close(client)
                count += 1
            }
            return count
        }
    }

    static func dryRunArguments(_ rig: SendCampaignTests.Rig, endpoint: [String], out: String) -> [String] {
        ["send", "--input", rig.csv] + endpoint.flatMap { ["--endpoint", $0] }
            + ["--key-file", rig.key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
               "--topic", MockServerProcess.topic, "--progress", "never", "--dry-run", "--out", out]
    }

    /// The rejected rows and reasons of a dry run are exactly a real run's; the rest are counted as
    /// `would_send` and get no record; no connection reaches the endpoint; exit 0 with rows rejected.
    @Test func aDryRunRejectsWhatARealRunRejectsForTheSameReasonsAndConnectsToNothing() throws {
        let rig = try SendCampaignTests.Rig(rows: 400, invalidRate: 0.25)
        let mock = try rig.mock()
        defer { mock.stop() }
        let real = try rig.send(mock)
        #expect(real.result.status == 0, "\(real.result.stderr)")

        let listener = try SilentListener()
        let out = rig.scratch.path("out-dry")
        let result = try Binary.run(Self.dryRunArguments(rig, endpoint: ["127.0.0.1:\(listener.port)"], out: out))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("dry run: nothing was sent"), "\(result.stdout)")
        #expect(listener.waiting() == 0, "the dry run connected to the endpoint")

        let dry = CampaignRun(result: result, outDirectory: out)
        func rejected(_ run: CampaignRun) throws -> [Int: String] {
            var byRow: [Int: String] = [:]
            for record in try run.records where record["outcome"] as? String == "rejected" {
                byRow[record["row"] as? Int ?? -1] = record["reason"] as? String
            }
            return byRow
        }
        let dryRejected = try rejected(dry)
        #expect(dryRejected.count == rig.totals.invalid && dryRejected.count > 50)
        #expect(dryRejected == (try rejected(real)))
        #expect(try dry.records.count == dryRejected.count, "only rejected rows have a record")
        let summary = try dry.summary
        #expect(summary["rows"] as? Int == 400)
        #expect(summary["rejected"] as? Int == dryRejected.count)
        #expect(summary["would_send"] as? Int == 400 - dryRejected.count)
        #expect(summary["dry_run"] as? Bool == true)
        #expect(summary["delivered"] as? Int == 0)
        #expect(try dry.deadTokens.isEmpty)
        #expect(try String(contentsOfFile: out + "/dead-tokens.csv", encoding: .utf8).hasPrefix("device_token,"))
        #expect(!FileManager.default.fileExists(atPath: out + "/campaign.json"), "a dry run is no campaign to resume")
    }

    /// `--endpoint production` and a name that does not resolve: no lookup, no connection, exit 0.
    @Test func aDryRunNeedsNoNetworkAndNoNameResolved() throws {
        let rig = try SendCampaignTests.Rig(rows: 50)
        let started = Date()
        let result = try Binary.run(Self.dryRunArguments(rig, endpoint: ["production", "no-such-host.invalid:443"],
                                                        out: rig.scratch.path("out-offline")))
        #expect(result.status == 0, "\(result.stderr)")
        // Clock: the wall clock; slack: 10 s for a run of well under one (a name lookup or connect would hang longer).
        #expect(Date().timeIntervalSince(started) < 10)
        let summary = try CampaignRun(result: result, outDirectory: rig.scratch.path("out-offline")).summary
        #expect(summary["would_send"] as? Int == 50)
    }

    /// An unusable key stops the dry run as it would the real one: exit 1, naming the file.
    @Test func aDryRunWithABadKeyStopsNamingTheKeyFile() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let badKey = try rig.scratch.write("broken.p8", "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
        let out = rig.scratch.path("out-bad-key")
        let arguments = Self.dryRunArguments(rig, endpoint: ["production"], out: out).map { $0 == rig.key ? badKey : $0 }
        let result = try Binary.run(arguments)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(badKey), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A client certificate that expired is named with its date (APNs would refuse every
    /// connection); a valid one passes.
    @Test func aDryRunWithAnExpiredCertificateSaysItExpired() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let key = rig.scratch.path("client-key.pem"), fresh = rig.scratch.path("client.pem")
        let expired = rig.scratch.path("client-expired.pem")
        let made = try Command.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                        "-nodes", "-keyout", key, "-out", fresh, "-subj", "/CN=apns-bulk test",
                                                        "-days", "30"])
        try #require(made.status == 0, "\(made.stderr)")
        let aged = try Command.run("/usr/bin/openssl", ["x509", "-in", fresh, "-signkey", key, "-days", "-1", "-out", expired])
        try #require(aged.status == 0, "\(aged.stderr)")
        func dryRun(_ certificate: String) throws -> Binary.Result {
            try Binary.run(["send", "--input", rig.csv, "--endpoint", "production", "--cert-file", certificate,
                            "--cert-key-file", key, "--topic", MockServerProcess.topic, "--dry-run", "--progress", "never",
                            "--out", rig.scratch.path("out-\(UUID().uuidString.prefix(8))")])
        }
        let refused = try dryRun(expired)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains(expired) && refused.stderr.contains("expired on"), "\(refused.stderr)")
        let passed = try dryRun(fresh)
        #expect(passed.status == 0, "\(passed.stderr)")
    }

    /// Nothing to resume after a dry run, and a campaign's directory is refused as `send` refuses it.
    @Test func aDryRunRefusesResumeAndACampaignsDirectory() throws {
        let rig = try SendCampaignTests.Rig(rows: 30)
        let mock = try rig.mock()
        defer { mock.stop() }
        let resumed = try Binary.run(Self.dryRunArguments(rig, endpoint: ["production"], out: rig.scratch.path("out-r")) + ["--resume"])
        #expect(resumed.status == 1, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("--dry-run with --resume"), "\(resumed.stderr)")
        let real = try rig.send(mock)
        #expect(real.result.status == 0)
        let into = try Binary.run(Self.dryRunArguments(rig, endpoint: ["production"], out: real.outDirectory))
        #expect(into.status == 1, "\(into.stderr)")
        #expect(into.stderr.contains("--resume"), "\(into.stderr)")
        try real.checkEveryRowExactlyOnce(rows: 30)
    }

    /// A dry run applies the payload template and the duplicate check as the real run does: a
    /// token listed again (in upper case) is rejected DuplicateToken naming the first row, and a
    /// filled payload over the size limit is rejected PayloadTooLarge.
    @Test func aDryRunFindsDuplicatesAndFillsTheTemplateAsTheRealRunDoes() throws {
        let rig = try SendCampaignTests.Rig(rows: 1)
        let token = String(repeating: "ab", count: 32)
        let other = String(repeating: "cd", count: 32)
        let huge = String(repeating: "x", count: 5000)
        let csv = try rig.scratch.write("dups.csv", """
            device_token,name
            \(token),Ann
            \(token.uppercased()),Bob
            \(other),\(huge)

            """)
        let template = try rig.scratch.write("template.json", #"{"aps":{"alert":"Hello {{name}}"}}"#)
        let out = rig.scratch.path("out-dups")
        let listener = try SilentListener()
        let result = try Binary.run(["send", "--input", csv, "--payload-template", template,
                                     "--endpoint", "127.0.0.1:\(listener.port)", "--key-file", rig.key,
                                     "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
                                     "--topic", MockServerProcess.topic, "--progress", "never", "--dry-run", "--out", out])
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        let records = try run.records
        #expect(records.count == 2, "\(records)")
        let byRow = Dictionary(records.map { ($0["row"] as? Int ?? -1, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byRow[2]?["reason"] as? String == "DuplicateToken")
        #expect(byRow[2]?["duplicate_of"] as? Int == 1)
        #expect(byRow[3]?["reason"] as? String == "PayloadTooLarge")
        let summary = try run.summary
        #expect(summary["rows"] as? Int == 3)
        #expect(summary["would_send"] as? Int == 1)
        #expect(listener.waiting() == 0)
    }
}
