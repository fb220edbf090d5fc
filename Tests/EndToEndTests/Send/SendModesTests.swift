import Foundation
import Testing
import TestSupport

/// The other ways to run a campaign: certificate auth (PEM pair and legacy .p12), the embedded mock
/// configured by a job file, and the wrong-environment stop.
@Suite(.serialized) struct SendModesTests {
    /// A CA and a client certificate for the app's topic, made with the openssl CLI.
    struct ClientCertificate {
        let caFile: String
        let certificate: String
        let key: String

        init(scratch: TemporaryDirectory) throws {
            caFile = scratch.path("client-ca.crt")
            certificate = scratch.path("client.crt")
            key = scratch.path("client.key")
            let caKey = scratch.path("client-ca.key")
            let request = scratch.path("client.csr")
            let steps: [[String]] = [
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey,
                 "-out", caFile, "-days", "1", "-subj", "/CN=Test Push CA"],
                ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
                 "-subj", "/CN=Apple Push Services: \(MockServerProcess.topic)/UID=\(MockServerProcess.topic)"],
                ["x509", "-req", "-in", request, "-CA", caFile, "-CAkey", caKey, "-CAcreateserial", "-out", certificate,
                 "-days", "1"],
            ]
            for step in steps {
                let result = try Command.run("/usr/bin/openssl", step)
                try #require(result.status == 0, "openssl \(step[0]): \(result.stderr)")
            }
        }
    }

    static func certificateArguments(_ rig: SendCampaignTests.Rig, mock: MockServerProcess, out: String) -> [String] {
        ["send", "--input", rig.csv, "--endpoint", mock.endpoint, "--ca-file", mock.caFile,
         "--topic", MockServerProcess.topic, "--connections", "2", "--progress", "never", "--out", out]
    }

    @Test func certificateAuthWithAPEMPairDeliversEveryRow() throws {
        let rig = try SendCampaignTests.Rig(rows: 500)
        let client = try ClientCertificate(scratch: rig.scratch)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, authentication: ["--client-ca", client.caFile])
        let out = rig.scratch.path("out-pem")
        let arguments = Self.certificateArguments(rig, mock: mock, out: out)
            + ["--cert-file", client.certificate, "--cert-key-file", client.key]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 500)
        #expect(try run.summary["delivered"] as? Int == 500)
    }

    @Test func certificateAuthWithALegacyEncryptedP12DeliversEveryRow() throws {
        let rig = try SendCampaignTests.Rig(rows: 300)
        let client = try ClientCertificate(scratch: rig.scratch)
        let p12 = rig.scratch.path("client.p12")
        let export = try Command.run("/usr/bin/openssl", ["pkcs12", "-export", "-legacy", "-in", client.certificate,
                                                         "-inkey", client.key, "-out", p12, "-passout", "pass:s3cret"])
        try #require(export.status == 0, "\(export.stderr)")
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, authentication: ["--client-ca", client.caFile])
        let out = rig.scratch.path("out-p12")
        let arguments = Self.certificateArguments(rig, mock: mock, out: out)
            + ["--p12-file", p12, "--p12-password-env", "APNS_P12_PASSWORD"]
        var environment = ProcessInfo.processInfo.environment
        environment["APNS_P12_PASSWORD"] = "s3cret"
        let run = CampaignRun(result: try Binary.run(arguments, environment: environment), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 300)
        #expect(try run.summary["delivered"] as? Int == 300)
    }

    @Test func aJobFileConfiguresTheRunAndTheEmbeddedMock() throws {
        let rig = try SendCampaignTests.Rig(rows: 2000, unregisteredRate: 0.05)
        let stats = rig.scratch.path("embedded-stats.json")
        let job = try rig.scratch.write("job.toml", """
            endpoint = ["mock"]
            topic = "com.example.jobfile"
            connections = 2
            max_streams = 40            # underscores work as well as dashes
            progress = "never"
            retry-base-ms = 10
            retry-max-ms = 100
            max-attempts = 20

            [mock]
            goaway-after = 300
            too-many-requests = 0.05
            unregistered-file = "\(rig.unregisteredFile)"
            stats-out = "\(stats)"
            """)
        let out = rig.scratch.path("out-job")
        // --connections on the command line wins over the job file's.
        let result = try Binary.run(["send", "--config", job, "--input", rig.csv, "--out", out, "--connections", "3"])
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2000)
        let summary = try run.summary
        #expect(summary["connections"] as? Int == 3)
        #expect(summary["unregistered"] as? Int == rig.totals.unregistered)
        #expect(summary["delivered"] as? Int == 2000 - rig.totals.unregistered)
        let mockStats = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stats))) as? [String: Any]
        let byReason = mockStats?["by_reason"] as? [String: Int] ?? [:]
        #expect((byReason["TooManyRequests"] ?? 0) > 0, "the [mock] table's faults were on")
        #expect((mockStats?["max_concurrent_streams_seen"] as? Int ?? 0) <= 40)
    }

    @Test func anUnknownJobFileKeyIsAUsageError() throws {
        let scratch = try TemporaryDirectory()
        let job = try scratch.write("job.toml", "no-such-flag = 3\n")
        let result = try Binary.run(["send", "--config", job, "--input", scratch.path("x.csv")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no-such-flag"))
    }

    @Test func sandboxTokensSentToProductionStopTheRun() throws {
        let rig = try SendCampaignTests.Rig(rows: 600)
        // Every token answers BadDeviceToken, as sandbox tokens do at the production endpoint.
        let tokens = try String(contentsOfFile: rig.csv, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { String($0.prefix(while: { $0 != "," })) }
        let respond = try rig.scratch.write("respond.txt", tokens.map { "\($0),400,BadDeviceToken" }.joined(separator: "\n") + "\n")
        let mock = try rig.mock(["--respond-file", respond])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("environment"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 600)
        let summary = try run.summary
        // No answer proved the environment right: no row is a dead token (`CleanupListTests`).
        #expect(summary["bad_token"] as? Int == 0)
        #expect(summary["aborted"] as? Int == 600)
    }

    @Test func noPrescanReadsACampaignFromANamedPipe() throws {
        let rig = try SendCampaignTests.Rig(rows: 1500, invalidRate: 0.02)
        let fifo = rig.scratch.path("campaign.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let content = try Data(contentsOf: URL(fileURLWithPath: rig.csv))
        // A producer writes the campaign into the pipe, as `zcat | apns-bulk` would.
        let writer = Thread {
            if let handle = FileHandle(forWritingAtPath: fifo) {
                handle.write(content)
                try? handle.close()
            }
        }
        writer.start()
        let mock = try rig.mock()
        let run = try rig.send(mock, ["--no-prescan"], input: fifo)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        #expect(try run.summary["rejected"] as? Int == rig.totals.invalid)
    }
}
