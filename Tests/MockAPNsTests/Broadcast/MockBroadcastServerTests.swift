import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import MockAPNs

/// Broadcasts and channel management served by the in-process mock over real TLS on 127.0.0.1,
/// driven by `MockTestClient`: the answers' statuses, headers and bodies as a client reads them.
@Suite(.serialized) struct MockBroadcastServerTests {
    /// The device-push suite's server setup: a verified key, `com.example.app`, an ephemeral CA.
    let base: MockAPNsServerTests
    var jwt: String { base.jwt }

    init() throws { base = try MockAPNsServerTests() }

    func start(_ adjust: (inout MockAPNsConfiguration) -> Void = { _ in }) throws -> MockAPNsServer {
        try base.start(adjust)
    }

    static let channelHeader = H2CapturedHeaders(text: BroadcastRules.channelIDHeader)
    static let requestHeaders = H2CapturedHeaders(text: BroadcastRules.requestIDHeader, uuid: ResponseHeaderNames.uniqueID)

    func run(_ server: MockAPNsServer, port: UInt16? = nil, _ requests: [MockTestClient.Request],
             captured: H2CapturedHeaders = requestHeaders) throws -> [H2Response] {
        let outcome = try MockTestClient.run(port: port ?? server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests, captured: captured)
        return outcome.responses.sorted { $0.tag < $1.tag }
    }

    static func text(_ response: H2Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func channelsAreCreatedReadListedAndDeletedOverTLS() throws {
        let server = try start()
        defer { _ = try? server.stop() }
        let created = try run(server, [BroadcastRequests.create(policy: 0, jwt: jwt), BroadcastRequests.create(policy: 1, jwt: jwt)],
                              captured: Self.channelHeader)
        #expect(created.map(\.status) == [201, 201])
        #expect(created.allSatisfy { $0.body.isEmpty })
        let ids = created.compactMap(\.apnsID)
        #expect(ids.count == 2 && ids.allSatisfy(BroadcastRules.isWellFormedChannelID))
        #expect(server.channels(of: BroadcastRequests.app) == ids)

        let answers = try run(server, [BroadcastRequests.read(ids[0], jwt: jwt), BroadcastRequests.list(jwt: jwt),
                                       BroadcastRequests.read(ids[0], jwt: jwt, method: "DELETE")])
        #expect(answers.map(\.status) == [200, 200, 204])
        #expect(Self.text(answers[0]) == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        #expect(Self.text(answers[1]) == "{\"channels\":[\"\(ids[0])\",\"\(ids[1])\"]}")
        #expect(answers.allSatisfy { $0.apnsID?.count == 36 }, "every answer carries apns-request-id")

        let after = try run(server, [BroadcastRequests.read(ids[0], jwt: jwt), BroadcastRequests.list(jwt: jwt)])
        #expect(after[0].status == 400)
        #expect(Response(status: after[0].status, apnsID: nil, body: after[0].body).reason == .channelNotRegistered)
        #expect(Self.text(after[1]) == "{\"channels\":[\"\(ids[1])\"]}")
    }

    @Test func aBroadcastIsAnsweredWithItsRequestIDAndAUniqueID() throws {
        let server = try start()
        defer { _ = try? server.stop() }
        let channel = try #require(try run(server, [BroadcastRequests.create(jwt: jwt)], captured: Self.channelHeader).first?.apnsID)
        let id = "123e4567-e89b-12d3-a456-426614174000"
        let answers = try run(server, [BroadcastRequests.broadcast(channel: channel, jwt: jwt, ["apns-request-id": id]),
                                       BroadcastRequests.broadcast(channel: channel, jwt: jwt),
                                       BroadcastRequests.broadcast(channel: BroadcastRequests.unknownChannel, jwt: jwt, ["apns-request-id": id])])
        #expect(answers.map(\.status) == [200, 200, 400])
        #expect(answers[0].apnsID == id)
        #expect(answers[0].body.isEmpty)
        #expect(answers[1].apnsID.map { HeaderRules.isCanonicalUUID($0) } == true, "a request id is made when none came")
        #expect(answers[0].uniqueID != nil && answers[1].uniqueID != nil && answers[0].uniqueID != answers[1].uniqueID)
        // An error answer echoes the request id and names its reason; production sends no unique id with it.
        #expect(answers[2].apnsID == id)
        #expect(answers[2].uniqueID == nil)
        #expect(Self.text(answers[2]) == #"{"reason":"ChannelNotRegistered"}"#)
    }

    @Test func channelManagementOnItsOwnListenerAndBroadcastsOnThePushListener() throws {
        let server = try start { $0.managementAddress = .loopback(port: 0) }
        defer { _ = try? server.stop() }
        let management = try #require(server.managementAddress?.port)
        #expect(management != server.port)
        let created = try run(server, port: management, [BroadcastRequests.create(jwt: jwt)], captured: Self.channelHeader)
        #expect(created.map(\.status) == [201])
        let channel = try #require(created.first?.apnsID)
        let onPushes = try run(server, [BroadcastRequests.create(jwt: jwt), BroadcastRequests.broadcast(channel: channel, jwt: jwt),
                                        .alert(MockAPNsFaultTests.token(1), jwt: jwt)])
        #expect(onPushes.map(\.status) == [404, 200, 200])
        let onManagement = try run(server, port: management, [BroadcastRequests.broadcast(channel: channel, jwt: jwt),
                                                               .alert(MockAPNsFaultTests.token(1), jwt: jwt),
                                                               BroadcastRequests.list(jwt: jwt)])
        #expect(onManagement.map(\.status) == [404, 404, 200])
        #expect(Response(status: 404, apnsID: nil, body: onManagement[1].body).reason == .badPath)
        let stats = try server.stop()
        #expect(stats.requests == 7)
        #expect(stats.connections == 3)
    }

    @Test func withCertificatesTheCertificatesAppIsServedAndAnotherIsTopicMismatch() throws {
        let clientCA = try CertificateAuthority(commonName: "test client CA")
        let server = try start { $0.authentication = .certificate(.authority(clientCA)) }
        defer { _ = try? server.stop() }
        let identity = try clientCA.issueClientCertificate(commonName: "Apple Push Services: com.example.app", userID: "com.example.app")
        let requests = [BroadcastRequests.create(jwt: "ignored"), BroadcastRequests.create(jwt: "ignored", app: "com.example.other")]
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority), identity: identity,
                                             requests: requests)
        let answers = outcome.responses.sorted { $0.tag < $1.tag }
        #expect(answers.map(\.status) == [201, 403])
        #expect(Response(status: 403, apnsID: nil, body: answers[1].body).reason == .topicMismatch)
        #expect(Response(status: 403, apnsID: nil, body: answers[1].body).disposition == .credentialsRefused)
        // Without a certificate the handshake fails: nothing is answered.
        let refused = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests, timeout: .seconds(2))
        #expect(refused.responses.isEmpty)
    }

    @Test func theChannelLimitRefusesOneMoreCreate() throws {
        let server = try start { $0.maxChannelsPerApp = 2 }
        defer { _ = try? server.stop() }
        let answers = try run(server, (0..<3).map { _ in BroadcastRequests.create(jwt: jwt) }, captured: Self.channelHeader)
        #expect(answers.map(\.status).sorted() == [201, 201, 400])
        let refused = try #require(answers.first { $0.status == 400 })
        #expect(refused.apnsID == nil, "no channel id on a refusal")
        #expect(Self.text(refused) == #"{"reason":"CannotCreateChannelConfig"}"#)
        #expect(server.channels(of: BroadcastRequests.app).count == 2)
    }

    @Test func goawayAndLatencyApplyToBroadcasts() throws {
        let server = try start {
            $0.initialMaxStreams = 10
            $0.goawayAfter = 4
            $0.latencyMilliseconds = 30
            $0.admitAnyChannel = true
        }
        defer { _ = try? server.stop() }
        let requests = (0..<10).map { _ in BroadcastRequests.broadcast(channel: BroadcastRequests.unknownChannel, jwt: jwt) }
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority), requests: requests)
        #expect(outcome.responses.map(\.tag).sorted() == [0, 1, 2, 3])
        #expect(outcome.responses.allSatisfy { $0.status == 200 })
        #expect(outcome.notProcessed.sorted() == Array(4..<10))
    }

    @Test func theRecordHoldsBroadcastsAndChannelRequests() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("record.jsonl.zst")
        let server = try start {
            $0.recordOutPath = file
            $0.recordPayloads = true
            $0.managementAddress = .loopback(port: 0)
        }
        let management = try #require(server.managementAddress?.port)
        let channel = try #require(try run(server, port: management, [BroadcastRequests.create(jwt: jwt)],
                                           captured: Self.channelHeader).first?.apnsID)
        let id = "123e4567-e89b-12d3-a456-426614174000"
        _ = try run(server, [BroadcastRequests.broadcast(channel: channel, jwt: jwt, ["apns-request-id": id]),
                             BroadcastRequests.broadcast(channel: "bad!", jwt: jwt)])
        _ = try server.stop()
        let lines = try ZstdCLI.decode(file).stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].contains(#""kind":"channel-create","bundle_id":"com.example.app","channel_id":"\#(channel)","apns_request_id":""#))
        #expect(lines[0].contains(#""status":201,"reason":null"#))
        #expect(lines[1].contains(#""kind":"broadcast","bundle_id":"com.example.app","channel_id":"\#(channel)","apns_request_id":"\#(id)","status":200,"reason":null,"key_id":"ABC1234567","payload":"{\"aps\""#))
        #expect(lines[2].contains(#""channel_id":"bad!""#) && lines[2].contains(#""status":400,"reason":"BadChannelId""#))
    }
}
