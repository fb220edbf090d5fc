import APNs
import Foundation
import Synchronization
import Testing
import TestSupport
import Transport
@testable import MockAPNs

/// The mock's binary gateway and feedback service over real TLS on 127.0.0.1, with client
/// certificates made here, spoken to by our own `TLSStream` client.
@Suite(.serialized) struct MockLegacyServersTests {
    static let deadToken = String(repeating: "ab", count: 32)

    struct Rig {
        let clientCA: CertificateAuthority
        let http: MockAPNsServer
        let servers: MockLegacyServers
        let record: String
        private let directory: TemporaryDirectory

        init(_ adjust: (inout MockLegacyConfiguration) -> Void = { _ in }) throws {
            clientCA = try CertificateAuthority(commonName: "test client CA")
            var mock = MockAPNsConfiguration()
            mock.identity = .ephemeral(hosts: ["127.0.0.1"])
            mock.authentication = .certificate(.authority(clientCA))
            mock.unregistered = [MockLegacyServersTests.deadToken: 1_700_000_000_123]
            http = try MockAPNsServer.start(mock)
            var legacy = MockLegacyConfiguration()
            legacy.binaryAddress = .loopback(port: 0)
            legacy.feedbackAddress = .loopback(port: 0)
            directory = try TemporaryDirectory()
            record = directory.path("legacy.jsonl")
            legacy.recordPath = record
            adjust(&legacy)
            servers = try MockLegacyServers.start(legacy, mock: mock, authority: http.certificateAuthority)
        }

        func client(withCertificate: Bool = true) throws -> TLSContext {
            let identity = withCertificate ? try clientCA.issueClientCertificate(commonName: "Apple Push Services: com.example.app",
                                                                                  userID: "com.example.app") : nil
            return try TLSContext.client(additionalTrust: .authority(http.certificateAuthority!), identity: identity,
                                         offersH2: false)
        }

        /// Stops both and returns the gateway's record lines.
        func stop() throws -> [[String: Any]] {
            try servers.stop()
            try http.stop()
            defer { try? FileManager.default.removeItem(atPath: record) }
            let text = try String(contentsOfFile: record, encoding: .utf8)
            return try text.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
            }
        }
    }

    /// Connects, sends `bytes`, and returns everything received until the server ends the stream.
    static func exchange(_ address: SocketAddress, _ context: TLSContext, send bytes: [UInt8]) throws -> [UInt8] {
        let reactor = try Reactor.start(name: "legacy-test")
        defer { reactor.stop(); reactor.join() }
        let received = Mutex<(bytes: [UInt8], done: Bool)>(([], false))
        reactor.execute {
            TLSStream.open(to: address, host: "127.0.0.1", context: context, on: reactor, timeout: .seconds(5)) { result in
                guard case .success(let stream) = result else { return received.withLock { $0.done = true } }
                stream.start(onBytes: { chunk in received.withLock { $0.bytes += Array(chunk) } },
                             onEnd: { _ in received.withLock { $0.done = true } })
                stream.queue(bytes)
                stream.flush()
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while !received.withLock({ $0.done }) && Date() < deadline { usleep(2000) }
        return received.withLock { $0.bytes }
    }

    static func frame(_ token: String, _ identifier: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        LegacyNotificationFrame.append(hexToken: Array(token.utf8)[...], payload: Array(#"{"aps":{}}"#.utf8)[...],
                                       identifier: identifier, expiration: 0, priority: 10, to: &out)
        return out
    }

    @Test func unregisteredTokenIsAnsweredStatus8AndTheFramesAfterItAreDiscarded() throws {
        let rig = try Rig()
        let good = String(repeating: "01", count: 32), later = String(repeating: "02", count: 32)
        let answer = try Self.exchange(rig.servers.binaryAddress!, rig.client(),
                                       send: Self.frame(good, 1) + Self.frame(Self.deadToken, 2) + Self.frame(later, 3))
        let record = try rig.stop()
        #expect(answer == LegacyErrorResponse(status: .invalidToken, identifier: 2).bytes)
        #expect(record.map { $0["result"] as? String } == ["accepted", "refused", "discarded"])
        #expect(record.map { $0["identifier"] as? Int } == [1, 2, 3])
        #expect(record[1]["status"] as? Int == 8)
    }

    @Test func shutdownAfterNAnswersStatus10NamingTheLastProcessed() throws {
        let rig = try Rig { $0.shutdownAfter = 2 }
        let tokens = (1...4).map { String(repeating: String(format: "%02x", $0), count: 32) }
        let frames = tokens.enumerated().flatMap { Self.frame($0.element, UInt32(10 + $0.offset)) }
        let answer = try Self.exchange(rig.servers.binaryAddress!, rig.client(), send: frames)
        let record = try rig.stop()
        #expect(answer == LegacyErrorResponse(status: .shutdown, identifier: 11).bytes)
        #expect(record.map { $0["result"] as? String } == ["accepted", "accepted", "discarded", "discarded"])
    }

    @Test func clientWithoutCertificateGetsNothing() throws {
        let rig = try Rig()
        let answer = try Self.exchange(rig.servers.binaryAddress!, rig.client(withCertificate: false),
                                       send: Self.frame(Self.deadToken, 1))
        let record = try rig.stop()
        #expect(answer.isEmpty)
        #expect(record.isEmpty)
    }

    @Test func feedbackServiceSendsTheUnregisteredTokensWithTheirTimestamps() throws {
        let rig = try Rig { $0.feedbackCutBytes = 0 }
        let answer = try Self.exchange(rig.servers.feedbackAddress!, rig.client(), send: [])
        _ = try rig.stop()
        let parsed = FeedbackTuple.parseAll(answer)
        #expect(parsed.truncatedBytes == 0)
        #expect(parsed.tuples.map(\.hexToken) == [Self.deadToken])
        #expect(parsed.tuples.first?.time == 1_700_000_000)
    }
}
