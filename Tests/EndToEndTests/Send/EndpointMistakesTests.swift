import Foundation
import Testing
import TestSupport

/// Mistakes about where a run goes and how it gets in, named for what they are: mock settings
/// without the mock (refused before anything is sent, rather than ignored on the way to APNs), a
/// .p12 given no password, a server certificate not yet valid by this machine's clock, tokens of
/// the other environment.
@Suite(.serialized) struct EndpointMistakesTests {
    typealias Rig = SendCampaignTests.Rig

    @Test func aMockOptionWithoutTheMockIsRefusedAndNothingIsSent() throws {
        let rig = try Rig(rows: 20)
        let mock = try rig.mock()
        let run = try rig.send(mock, ["--mock-option", "goaway-after=5"])
        mock.stop()
        #expect(run.result.status == 1, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("--mock-option goaway-after=5 configures the embedded mock of --endpoint mock"),
                "\(run.result.stderr)")
        #expect(run.result.stderr.contains("add --endpoint mock"), "\(run.result.stderr)")
        #expect(try mock.stats()["requests"] as? Int == 0, "nothing sent")
    }

    @Test func aJobFilesMockTableWithoutTheMockIsRefusedNamingTheFile() throws {
        let rig = try Rig(rows: 20)
        let mock = try rig.mock()
        let job = try rig.scratch.write("job.toml", "connections = 2\n\n[mock]\ngoaway-after = 5\n")
        let run = try rig.send(mock, ["--config", job])
        let inFile = try rig.scratch.write("job-endpoint.toml", "endpoint = [\"\(mock.endpoint)\"]\n[mock]\nfail = \"500:0.5\"\n")
        let fromFile = try Binary.run(["send", "--config", inFile, "--input", rig.csv, "--key-file", rig.key,
                                       "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
                                       "--topic", MockServerProcess.topic, "--ca-file", mock.caFile,
                                       "--out", rig.scratch.path("out-file")])
        mock.stop()
        for (result, file) in [(run.result, job), (fromFile, inFile)] {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("--config \(file): its [mock] table configures the embedded mock of --endpoint mock"),
                    "\(result.stderr)")
            #expect(result.stderr.contains("endpoints are \(mock.endpoint)"), "\(result.stderr)")
        }
        #expect(try mock.stats()["requests"] as? Int == 0, "nothing sent")

        // With the mock, from the command line over the file's endpoint, the table is what it is for.
        let rehearsal = try rig.scratch.write("rehearsal.toml", "endpoint = [\"production\"]\n[mock]\nlatency-ms = 1\n")
        let out = rig.scratch.path("out-rehearsal")
        let rehearsed = try Binary.run(["send", "--config", rehearsal, "--endpoint", "mock", "--input", rig.csv,
                                        "--progress", "never", "--out", out])
        #expect(rehearsed.status == 0, "\(rehearsed.stderr)")
        try CampaignRun(result: rehearsed, outDirectory: out).checkEveryRowExactlyOnce(rows: 20)
    }

    @Test func aP12GivenNoPasswordSaysItNeedsOneAndWhichFlagGivesIt() throws {
        let rig = try Rig(rows: 5)
        let pair = try EmbeddedMockRehearsalTests.selfSigned(rig.scratch, name: "locked")
        let p12 = rig.scratch.path("locked.p12")
        let export = try Command.run("/usr/bin/openssl", ["pkcs12", "-export", "-in", pair.certificate, "-inkey", pair.key,
                                                         "-out", p12, "-passout", "pass:secret"])
        try #require(export.status == 0, "\(export.stderr)")
        let result = try Binary.run(["send", "--input", rig.csv, "--p12-file", p12, "--endpoint", "mock",
                                     "--out", rig.scratch.path("out-p12")])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("protected by a password and none was given"), "\(result.stderr)")
        #expect(result.stderr.contains("--p12-password-env"), "\(result.stderr)")
        #expect(!result.stderr.contains("wrong password"), "\(result.stderr)")
    }

    @Test func aServerCertificateNotYetValidByThisClockSaysToCheckTheClock() throws {
        let rig = try Rig(rows: 50)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-clock")
        // Three days behind: the mock's certificate starts a day before the real now.
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        let run = CampaignRun(result: try FakeTime.run(offset: "-3d", arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("is not valid yet: its notBefore ("), "\(run.result.stderr)")
        #expect(run.result.stderr.contains("is in the future by this machine's clock"), "\(run.result.stderr)")
        #expect(run.result.stderr.contains("check this machine's clock"), "\(run.result.stderr)")
        #expect(!run.result.stderr.contains("add that CA with --ca-file"), "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 50)
    }

    @Test func tokensOfTheOtherEnvironmentStopTheRunNamingEnvironmentAndEndpointOnStderr() throws {
        let rig = try Rig(rows: 300)
        let lines = try String(contentsOfFile: rig.csv, encoding: .utf8).split(separator: "\n")
        try #require(lines.first?.hasPrefix("device_token,") == true, "\(lines.first ?? "")")
        let answers = lines.dropFirst().map { "\($0.prefix { $0 != "," }),400,BadDeviceToken" }.joined(separator: "\n")
        let mock = try rig.mock(["--respond-file", try rig.scratch.write("bad.txt", answers + "\n")])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        let stderr = run.result.stderr
        #expect(stderr.contains("stopped: 100 answers were BadDeviceToken and none was delivered"), "\(stderr)")
        #expect(stderr.contains("--environment (production or sandbox) and --endpoint"), "\(stderr)")
        try run.checkEveryRowExactlyOnce(rows: 300)
    }
}
