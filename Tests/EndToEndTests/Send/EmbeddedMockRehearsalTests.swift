import Foundation
import Testing
import TestSupport

/// `send --endpoint mock` rehearses the real run: certificate auth is checked as APNs checks it
/// (the certificate's issuer is trusted, its dates and topic count), and the mock's own
/// `verify-key-file` is honoured, so that refused credentials can be rehearsed.
@Suite(.serialized) struct EmbeddedMockRehearsalTests {
    static let topic = MockServerProcess.topic

    static func send(_ rig: SendCampaignTests.Rig, _ name: String, _ flags: [String],
                     environment: [String: String]? = nil) throws -> CampaignRun {
        let out = rig.scratch.path(name)
        let arguments = ["send", "--input", rig.csv, "--endpoint", "mock", "--connections", "2", "--progress", "never",
                         "--out", out] + flags
        return CampaignRun(result: try Binary.run(arguments, environment: environment ?? ProxyTests.environment()),
                           outDirectory: out)
    }

    /// A self-signed certificate naming `topic` in its UID, made with openssl (under faketime when
    /// `madeAt` is given, so that it can be expired already).
    static func selfSigned(_ scratch: TemporaryDirectory, name: String, madeAt: String? = nil) throws -> (certificate: String, key: String) {
        let certificate = scratch.path("\(name).crt"), key = scratch.path("\(name).key")
        var command = ["/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                       "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                       "-subj", "/UID=\(topic)/CN=Apple Push Services: \(topic)"]
        if let madeAt { command = ["/usr/bin/faketime", madeAt] + command }
        let result = try Command.run(command[0], Array(command.dropFirst()))
        try #require(result.status == 0, "openssl req: \(result.stderr)")
        return (certificate, key)
    }

    @Test func aClientCertificateIssuedByACAIsAcceptedByItsIssuer() throws {
        let rig = try SendCampaignTests.Rig(rows: 300)
        let client = try SendModesTests.ClientCertificate(scratch: rig.scratch)
        // The certificate file holds the leaf only: the mock trusts it as given.
        let leafOnly = try Self.send(rig, "out-leaf", ["--cert-file", client.certificate, "--cert-key-file", client.key,
                                                  "--topic", Self.topic])
        #expect(leafOnly.result.status == 0, "\(leafOnly.result.stdout)\(leafOnly.result.stderr)")
        try leafOnly.checkEveryRowExactlyOnce(rows: 300)
        #expect(try leafOnly.summary["delivered"] as? Int == 300)
        // Leaf and issuer in one file: the issuer is the one trusted.
        let chain = try rig.scratch.write("chain.pem", try String(contentsOfFile: client.certificate, encoding: .utf8)
                                              + String(contentsOfFile: client.caFile, encoding: .utf8))
        let withIssuer = try Self.send(rig, "out-chain", ["--cert-file", chain, "--cert-key-file", client.key])
        #expect(withIssuer.result.status == 0, "\(withIssuer.result.stdout)\(withIssuer.result.stderr)")
        try withIssuer.checkEveryRowExactlyOnce(rows: 300)
        #expect(try withIssuer.summary["delivered"] as? Int == 300)
    }

    @Test func aSelfSignedP12IsTrustedItself() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let pair = try Self.selfSigned(rig.scratch, name: "self")
        let p12 = rig.scratch.path("self.p12")
        let export = try Command.run("/usr/bin/openssl", ["pkcs12", "-export", "-in", pair.certificate, "-inkey", pair.key,
                                                         "-out", p12, "-passout", "pass:pw"])
        try #require(export.status == 0, "\(export.stderr)")
        let run = try Self.send(rig, "out", ["--p12-file", p12, "--p12-password-env", "P12_PW"],
                           environment: ProxyTests.environment(["P12_PW": "pw"]))
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        #expect(try run.summary["delivered"] as? Int == 200)
    }

    @Test func anExpiredClientCertificateIsRefusedAndEveryRowAborted() throws {
        let rig = try SendCampaignTests.Rig(rows: 100)
        let expired = try Self.selfSigned(rig.scratch, name: "expired", madeAt: "2020-01-01 00:00:00")
        let run = try Self.send(rig, "out", ["--cert-file", expired.certificate, "--cert-key-file", expired.key])
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stdout.contains("certificate"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 100)
        #expect(try run.summary["aborted"] as? Int == 100)
    }

    @Test func aTopicTheCertificateDoesNotNameIsRefused() throws {
        let rig = try SendCampaignTests.Rig(rows: 100)
        let pair = try Self.selfSigned(rig.scratch, name: "self")
        let run = try Self.send(rig, "out", ["--cert-file", pair.certificate, "--cert-key-file", pair.key,
                                        "--topic", "com.example.other"])
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 100)
        #expect(try run.summary["delivered"] as? Int == 0)
        #expect(try run.records.contains { $0["reason"] as? String == "TopicDisallowed" })
    }

    @Test func theMocksOwnVerifyKeyIsHonouredSoRefusedCredentialsCanBeRehearsed() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let otherKey = try rig.scratch.signingKey("other.p8")
        let credentials = ["--key-file", rig.key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
                           "--topic", Self.topic]
        let mockKnows = { (key: String) in
            ["--mock-option", "verify-key-file=\(key)", "--mock-option", "key-id=\(MockServerProcess.keyID)",
             "--mock-option", "team-id=\(MockServerProcess.teamID)"]
        }
        let refused = try Self.send(rig, "out-refused", credentials + mockKnows(otherKey))
        #expect(refused.result.status == 2, "\(refused.result.stdout)\(refused.result.stderr)")
        #expect(refused.result.stdout.contains("APNs refused the credentials (InvalidProviderToken)"), "\(refused.result.stdout)")
        try refused.checkEveryRowExactlyOnce(rows: 200)
        #expect(try refused.summary["aborted"] as? Int ?? 0 >= 199, "at most the one row that met the refusal failed")
        #expect(try refused.summary["delivered"] as? Int == 0)

        let accepted = try Self.send(rig, "out-accepted", credentials + mockKnows(rig.key))
        #expect(accepted.result.status == 0, "\(accepted.result.stdout)\(accepted.result.stderr)")
        try accepted.checkEveryRowExactlyOnce(rows: 200)
        #expect(try accepted.summary["delivered"] as? Int == 200)
    }
}
