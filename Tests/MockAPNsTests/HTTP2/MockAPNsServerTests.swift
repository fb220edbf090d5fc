import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import MockAPNs

/// The in-process server over real TLS on 127.0.0.1, driven by `MockTestClient`.
@Suite(.serialized) struct MockAPNsServerTests {
    let tokens: TokenFixture
    let jwt: String

    init() throws {
        tokens = try TokenFixture()
        jwt = try tokens.token(issuedAt: now)
    }

    func start(_ adjust: (inout MockAPNsConfiguration) -> Void = { _ in }) throws -> MockAPNsServer {
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .token(try tokens.verifier())
        configuration.topics = ["com.example.app"]
        configuration.identity = .ephemeral(hosts: ["127.0.0.1"])
        adjust(&configuration)
        return try MockAPNsServer.start(configuration)
    }

    func alerts(_ count: Int) -> [MockTestClient.Request] {
        (0..<count).map { MockTestClient.Request.alert(MockAPNsFaultTests.token($0), jwt: jwt) }
    }

    @Test func streamsOpenFromOneToMaxStreamsAfterTheFirstAuthorizedRequest() throws {
        let server = try start { $0.maxStreams = 40 }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(200))
        #expect(outcome.responses.count == 200)
        #expect(outcome.responses.allSatisfy { $0.status == 200 && $0.apnsID?.count == 36 })
        // The client starts at one stream (no event) and hears of 40 once.
        #expect(outcome.streamLimits == [40])
        #expect(server.stats().requests == 200)
        let stats = try server.stop()
        #expect(server.stats() == stats)
        #expect(stats.requests == 200)
        #expect(stats.maxConcurrentStreamsSeen > 1 && stats.maxConcurrentStreamsSeen <= 40)
        #expect(stats.connections == 1)
    }

    @Test func goawayAfterNLeavesLaterStreamsUnprocessed() throws {
        let server = try start {
            $0.initialMaxStreams = 10
            $0.goawayAfter = 3
            $0.latencyMilliseconds = 30
        }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(10))
        #expect(outcome.responses.map(\.tag).sorted() == [0, 1, 2])
        #expect(outcome.notProcessed.sorted() == Array(3..<10))
        let goaway = outcome.events.compactMap { if case .goaway(let g) = $0 { g } else { nil } }.first
        #expect(goaway?.lastStreamID == 5)
        #expect(goaway?.debugData == #"{"reason":"Shutdown"}"#)
    }

    @Test func resetAfterNClosesTheConnection() throws {
        let server = try start { $0.resetAfter = 2 }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(5))
        #expect(outcome.connectionClosed)
        #expect(outcome.responses.count == 2)
        #expect(outcome.responses.count + outcome.notProcessed.count + outcome.lost.count == 5)
    }

    @Test func stallAfterNAnswersNothingMoreNotEvenPings() throws {
        let server = try start { $0.stallAfter = 2 }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(4), pingAfterResponses: 2, timeout: .milliseconds(800))
        #expect(outcome.responses.count == 2)
        #expect(!outcome.pingAcknowledged)
        #expect(!outcome.connectionClosed)
    }

    @Test func refusedStreamsAreNotProcessedAndCounted() throws {
        let server = try start {
            $0.initialMaxStreams = 50
            $0.refuseStreamsRate = 0.3
            $0.seed = 3
        }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(100))
        #expect(outcome.responses.count + outcome.notProcessed.count == 100)
        #expect(outcome.notProcessed.count > 10 && outcome.notProcessed.count < 50)
        let stats = try server.stop()
        #expect(stats.refusedStreams == outcome.notProcessed.count)
    }

    @Test func throttleAfterErrorsDropsTheConnectionToOneStream() throws {
        let server = try start {
            $0.maxStreams = 30
            $0.throttleAfterErrors = true
        }
        defer { _ = try? server.stop() }
        var requests = alerts(20)
        requests[5] = .alert("zz", jwt: jwt)
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests)
        #expect(outcome.responses.count == 20)
        #expect(outcome.responses.filter { $0.status == 400 }.count == 1)
        #expect(outcome.streamLimits.last == 1)
    }

    @Test func certificateModeNeedsAClientCertificateAndNoToken() throws {
        let clientCA = try CertificateAuthority(commonName: "test client CA")
        let server = try start {
            $0.authentication = .certificate(.authority(clientCA))
            $0.maxStreams = 25
        }
        defer { _ = try? server.stop() }
        let identity = try clientCA.issueClientCertificate(commonName: "Apple Push Services: com.example.app", userID: "com.example.app")
        let requests = (0..<5).map { MockTestClient.Request.alert(MockAPNsFaultTests.token($0), jwt: nil) }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             identity: identity, requests: requests)
        #expect(outcome.responses.map(\.status) == [200, 200, 200, 200, 200])
        #expect(outcome.streamLimits.first == 25)
        // Without a certificate the handshake fails: nothing is answered.
        let refused = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests, timeout: .seconds(2))
        #expect(refused.responses.isEmpty)
    }

    @Test func anApnsIDTooLongForAnInlineFieldIsStillEchoed() throws {
        let server = try start { _ in }
        defer { _ = try? server.stop() }
        let long = String(repeating: "0123456789", count: 8)  // 80 bytes: past H2ResponseField's room
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: [.alert(MockAPNsFaultTests.token(0), jwt: jwt, apnsID: long)])
        let answer = try #require(outcome.responses.first)
        #expect(answer.status == 400)
        #expect(answer.apnsID == long)
        #expect(Response(status: answer.status, apnsID: answer.apnsID, body: answer.body).reason == .badMessageId)
    }

    @Test func errorAnswersCarryTheirReasonAndTheEchoedApnsID() throws {
        let server = try start { $0.unregistered = [MockAPNsFaultTests.token(1): 1_700_000_000_000] }
        defer { _ = try? server.stop() }
        let id = "123e4567-e89b-12d3-a456-426614174000"
        let requests: [MockTestClient.Request] = [
            .alert(MockAPNsFaultTests.token(0), jwt: jwt),
            .alert(MockAPNsFaultTests.token(1), jwt: jwt, apnsID: id),
        ]
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests)
        let dead = try #require(outcome.responses.first { $0.tag == 1 })
        #expect(dead.status == 410)
        #expect(dead.apnsID == id)
        let response = Response(status: dead.status, apnsID: dead.apnsID, body: dead.body)
        #expect(response.reason == .unregistered)
        #expect(response.timestamp == 1_700_000_000_000)
        #expect(outcome.responses.first { $0.tag == 0 }?.body.isEmpty == true)
    }

    @Test func theRecordIsFlushedEverySecondWhileTheServerRuns() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("mock-record.jsonl.zst")
        let server = try start { $0.recordOutPath = file }
        defer { _ = try? server.stop() }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: alerts(3) + [.alert("zz", jwt: jwt)])
        #expect(outcome.responses.count == 4)
        Thread.sleep(forTimeInterval: 1.3)
        let text = try ZstdCLI.decode(file).stdout
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines.filter { $0.contains(#""status":200,"reason":null"#) }.count == 3)
        #expect(lines.last?.contains(#""device_token":"zz","apns_id":"#) == true)
        #expect(lines.last?.contains(#""status":400,"reason":"BadDeviceToken"}"#) == true)
    }
}
