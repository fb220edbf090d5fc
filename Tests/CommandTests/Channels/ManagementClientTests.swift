import APNs
import Foundation
import Synchronization
import Testing
import Transport
@testable import apns_bulk

/// `ManagementClient` against a server that answers from a script, for what the mock-server does
/// not do to channel requests: 429s and 5xx (its random faults touch only pushes), an expired
/// provider token, a connection dropped with a request in flight.
@Suite struct ManagementClientTests {
    enum Step: Sendable {
        case answer(Int, reason: String? = nil, channelID: String? = nil)
        /// The connection is closed with the request unanswered.
        case drop
    }

    /// What the server received, in order; shared with its reactor thread behind a lock.
    final class Received: Sendable {
        let requests = Mutex<[(method: String, path: String, authorization: String?, channelID: String?)]>([])
        var count: Int { requests.withLock { $0.count } }
    }

    final class ScriptedServer: H2ServerDelegate, H2ServerConnectionHandler {
        let script: [Step]
        let received: Received

        init(script: [Step], received: Received) {
            self.script = script
            self.received = received
        }

        func connectionOpened(_ connection: H2ServerConnection) -> any H2ServerConnectionHandler { self }

        func received(_ request: H2ServerRequest, on connection: H2ServerConnection) {
            let index = received.requests.withLock { list in
                list.append((request.method, request.path, request.headers.values(of: "authorization").first,
                             request.headers.values(of: "apns-channel-id").first))
                return list.count - 1
            }
            switch index < script.count ? script[index] : .answer(500, reason: "InternalServerError") {
            case let .answer(status, reason, channelID):
                connection.respond(streamID: request.streamID, status: status,
                                   headers: channelID.map { [H2Header("apns-channel-id", $0)] } ?? [],
                                   body: reason.map { Response.errorBody(reasonText: $0) } ?? [])
            case .drop:
                connection.reset()
            }
        }
    }

    struct Rig {
        let server: H2Server<ScriptedServer>
        let received = Received()
        let target: ManagementTarget
        /// Fast backoff: the retries are counted, not timed.
        let policy = ManagementPolicy(concurrency: 1, maxAttempts: 3, connectAttempts: 2, backoffBaseMilliseconds: 5,
                                      backoffCapMilliseconds: 20)

        init(_ script: [Step], token: Bool = false) throws {
            let received = self.received
            server = try H2Server.start(.init(address: .loopback(port: 0), identity: .ephemeral(hosts: ["127.0.0.1"]))) {
                ScriptedServer(script: script, received: received)
            }
            let authority = try #require(server.certificateAuthority)
            let tokens = token ? try TokenSource(signingKey: SigningKey.generate(), keyID: ProviderToken.KeyID("ABC1234567"),
                                                 teamID: ProviderToken.TeamID("TEAM123456")) : nil
            target = ManagementTarget(endpoint: Endpoint(host: "127.0.0.1", port: server.address.port), proxy: nil,
                                      tls: try TLSContext.client(additionalTrust: .authority(authority)), tokens: tokens)
        }

        /// Runs `requests`; the answers by request index, or the stop.
        func run(_ requests: [ManagementRequest], stopAtFirstRefusal: Bool = false) -> (answers: [Int: ManagementAnswer], stop: ManagementStop?) {
            let answers = Mutex<[Int: ManagementAnswer]>([:])
            do {
                try ManagementClient.run(requests, to: target, policy: policy, stopAtFirstRefusal: stopAtFirstRefusal) { index, answer in
                    answers.withLock { $0[index] = answer }
                }
            } catch {
                return (answers.withLock { $0 }, error)
            }
            return (answers.withLock { $0 }, nil)
        }
    }

    static let create = ChannelManagementAPI.create(bundleID: "com.example.app", policy: .mostRecent)

    @Test func a429AndA503AreTriedAgainUntilTheChannelIsMade() throws {
        let rig = try Rig([.answer(429, reason: "TooManyRequests"), .answer(503, reason: "ServiceUnavailable"),
                           .answer(201, channelID: "bmV3LWNoYW5uZWw=")])
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([Self.create])
        #expect(stop == nil)
        #expect(answers[0] == .accepted(status: 201, channelID: "bmV3LWNoYW5uZWw=", body: [], afterLoss: false))
        #expect(rig.received.count == 3)
    }

    @Test func a5xxOnEveryAttemptIsTheFinalAnswerAfterMaxAttempts() throws {
        let rig = try Rig(Array(repeating: .answer(500, reason: "InternalServerError"), count: 5))
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([Self.create])
        #expect(stop == nil)
        #expect(answers[0] == .refused(status: 500, reason: "InternalServerError", afterLoss: false))
        #expect(rig.received.count == rig.policy.maxAttempts)
    }

    @Test func aRefusalIsNotTriedAgain() throws {
        let rig = try Rig([.answer(400, reason: "ChannelNotRegistered"), .answer(204)])
        defer { rig.server.stop() }
        let request = ChannelManagementAPI.delete(bundleID: "com.example.app", channelID: "dW5rbm93bg==")
        let (answers, _) = rig.run([request])
        #expect(answers[0] == .refused(status: 400, reason: "ChannelNotRegistered", afterLoss: false))
        #expect(rig.received.count == 1)
        let seen = rig.received.requests.withLock { $0[0] }
        #expect(seen.method == "DELETE" && seen.path == "/1/apps/com.example.app/channels" && seen.channelID == "dW5rbm93bg==")
    }

    @Test func anExpiredProviderTokenIsReplacedAndTheRequestSentAgain() throws {
        let rig = try Rig([.answer(403, reason: "ExpiredProviderToken"), .answer(200)], token: true)
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([ChannelManagementAPI.listAll(bundleID: "com.example.app")])
        #expect(stop == nil)
        #expect(answers[0] == .accepted(status: 200, channelID: nil, body: [], afterLoss: false))
        let tokens = rig.received.requests.withLock { $0.map(\.authorization) }
        #expect(tokens.count == 2 && tokens[0] != nil && tokens[1] != nil && tokens[0] != tokens[1], "a fresh token the second time")
        #expect(tokens.allSatisfy { $0?.hasPrefix("bearer ") == true })
    }

    @Test func refusedCredentialsStopTheRunWithAppleReason() throws {
        let rig = try Rig([.answer(403, reason: "InvalidProviderToken")], token: true)
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([Self.create, Self.create, Self.create])
        #expect(answers.isEmpty && rig.received.count == 1, "nothing more is sent")
        #expect(stop?.message.hasPrefix("APNs refused the credentials: 403 InvalidProviderToken: ") == true, "\(String(describing: stop))")
    }

    @Test func aRequestLostWithItsConnectionIsSentAgainOnANewOne() throws {
        let rig = try Rig([.answer(201, channelID: "Zmlyc3Q="), .drop, .answer(201, channelID: "c2Vjb25k")])
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([Self.create, Self.create])
        #expect(stop == nil)
        #expect(answers[0] == .accepted(status: 201, channelID: "Zmlyc3Q=", body: [], afterLoss: false))
        #expect(answers[1] == .accepted(status: 201, channelID: "c2Vjb25k", body: [], afterLoss: true),
                "said, for a create is not idempotent")
        #expect(rig.server.connectionsAccepted == 2)
    }

    @Test func stopAtFirstRefusalSendsNothingAfterIt() throws {
        let rig = try Rig([.answer(201, channelID: "Zmlyc3Q="), .answer(400, reason: "CannotCreateChannelConfig"),
                           .answer(201, channelID: "c2Vjb25k")])
        defer { rig.server.stop() }
        let (answers, stop) = rig.run([Self.create, Self.create, Self.create], stopAtFirstRefusal: true)
        #expect(stop == nil && rig.received.count == 2)
        #expect(answers[1] == .refused(status: 400, reason: "CannotCreateChannelConfig", afterLoss: false) && answers[2] == nil)
    }
}
