import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import MockAPNs

/// The mock's broadcast and channel-management rules, request by request (docs/apns.md, "Live
/// Activity broadcast and channel management"): every reason of Apple's broadcast error list that a
/// request can earn, in the order of checks.
@Suite struct MockBroadcastRulesTests {
    @Test func aBroadcastToACreatedChannelIsTakenInEachOfApplesThreeSpellings() {
        let mock = BroadcastRulesHarness()
        let channel = mock.newChannel()
        #expect(BroadcastRules.isWellFormedChannelID(channel))
        for spelling in ["liveactivity", "Liveactivity", "LiveActivity"] {
            let answer = mock.broadcast(channel: channel, ["apns-push-type": spelling, "apns-expiration": "1700000000"])
            #expect(answer.status == 200, "\(spelling): \(String(describing: answer.reason))")
            #expect(answer.kind == .broadcast)
        }
        // At the limit exactly: 5,120 bytes.
        let padding = String(repeating: "x", count: BroadcastRules.payloadBytes - 10)
        let largest = Array("{\"aps\":\"\(padding)\"}".utf8)
        #expect(largest.count == BroadcastRules.payloadBytes)
        #expect(mock.broadcast(channel: channel, body: largest).status == 200)
    }

    @Test func everyBroadcastHeaderAndBodyRuleAnswersItsReason() {
        let mock = BroadcastRulesHarness()
        let channel = mock.newChannel()
        let noStorage = mock.newChannel(policy: 0)
        let app = BroadcastRequests.app
        let cases: [(String, MockBroadcastAnswer, Reason)] = [
            ("no bundle id", mock.answer(path: "/4/broadcasts/apps/", headers: BroadcastRequests.broadcastHeaders(channel: channel)), .badPath),
            ("another version", mock.answer(path: "/5/broadcasts/apps/\(app)", headers: BroadcastRequests.broadcastHeaders(channel: channel)), .badPath),
            ("GET", mock.answer(method: "GET", path: "/4/broadcasts/apps/\(app)", headers: BroadcastRequests.broadcastHeaders(channel: channel)), .methodNotAllowed),
            ("two channel ids", mock.answer(path: "/4/broadcasts/apps/\(app)",
                                            headers: BroadcastRequests.broadcastHeaders(channel: channel) + [("apns-channel-id", channel)],
                                            body: BroadcastRequests.update), .duplicateHeaders),
            ("no token", mock.broadcast(channel: channel, ["authorization": nil]), .missingProviderToken),
            ("suffix in the path", mock.broadcast(channel: channel, app: app + ".push-type.liveactivity"), .topicDisallowed),
            ("suffix in apns-topic", mock.broadcast(channel: channel, ["apns-topic": app + ".push-type.liveactivity"]), .topicDisallowed),
            ("no channel id", mock.broadcast(channel: channel, ["apns-channel-id": nil]), .missingChannelId),
            ("empty channel id", mock.broadcast(channel: ""), .missingChannelId),
            ("channel id not base64", mock.broadcast(channel: "not base64!"), .badChannelId),
            ("no push type", mock.broadcast(channel: channel, ["apns-push-type": nil]), .missingPushType),
            ("push type alert", mock.broadcast(channel: channel, ["apns-push-type": "alert"]), .invalidPushType),
            ("priority 7", mock.broadcast(channel: channel, ["apns-priority": "7"]), .badPriority),
            ("no expiration", mock.broadcast(channel: channel, ["apns-expiration": nil]), .badExpirationDate),
            ("expiration not seconds", mock.broadcast(channel: channel, ["apns-expiration": "soon"]), .badExpirationDate),
            ("request id not a UUID", mock.broadcast(channel: channel, ["apns-request-id": "abc"]), .badMessageId),
            ("empty body", mock.broadcast(channel: channel, body: []), .payloadEmpty),
            ("5,121 bytes", mock.broadcast(channel: channel, body: Array(repeating: 0x20, count: 16), bodyLength: 5121), .payloadTooLarge),
            ("not a JSON object", mock.broadcast(channel: channel, body: Array("[1]".utf8)), .badRequestPayload),
            ("unknown channel", mock.broadcast(channel: BroadcastRequests.unknownChannel), .channelNotRegistered),
            ("expiration on no-storage", mock.broadcast(channel: noStorage, ["apns-expiration": "1700000000"]), .badExpirationDate),
        ]
        for (name, answer, reason) in cases {
            #expect(answer.reason == reason, "\(name)")
            #expect(answer.status == reason.status, "\(name)")
        }
        // Expiration 0 on a no-storage channel, and an echoed request id, are fine.
        let id = "123e4567-e89b-12d3-a456-426614174000"
        let fine = mock.broadcast(channel: noStorage, ["apns-request-id": id])
        #expect(fine.status == 200)
        #expect(fine.requestID == id)
        #expect(fine.channelID == noStorage)
    }

    @Test func appsTheCredentialsDoNotServeAreTopicMismatchAndDisabledAppsFeatureNotEnabled() {
        let mock = BroadcastRulesHarness {
            $0.topics = [BroadcastRequests.app, "com.example.off"]
            $0.broadcastDisabledApps = ["com.example.off"]
        }
        let channel = mock.newChannel()
        #expect(mock.broadcast(channel: channel, app: "com.example.other").reason == .topicMismatch)
        #expect(mock.broadcast(channel: channel, app: "com.example.APP").reason == .topicMismatch)
        #expect(mock.create(app: "com.example.other").reason == .topicMismatch)
        #expect(mock.broadcast(channel: channel, app: "com.example.off").reason == .featureNotEnabled)
        #expect(mock.create(app: "com.example.off").reason == .featureNotEnabled)
        #expect(mock.broadcast(channel: channel).status == 200)
    }

    /// A connection remembers its last accepted app and broadcast headers (as they came) to skip
    /// their checks when they repeat: every other value still earns its reason right after an
    /// accepted broadcast, and the channel's policy still reads the expiration.
    @Test func aBroadcastRightAfterAnAcceptedOneStillAnswersEachBadValuesReason() {
        let mock = BroadcastRulesHarness {
            $0.topics = [BroadcastRequests.app, "com.example.off"]
            $0.broadcastDisabledApps = ["com.example.off"]
        }
        let channel = mock.newChannel()
        let noStorage = mock.newChannel(policy: 0)
        let app = BroadcastRequests.app
        let cases: [(String, () -> MockBroadcastAnswer, Reason)] = [
            ("push type alert", { mock.broadcast(channel: channel, ["apns-push-type": "alert"]) }, .invalidPushType),
            ("no push type", { mock.broadcast(channel: channel, ["apns-push-type": nil]) }, .missingPushType),
            ("priority 7", { mock.broadcast(channel: channel, ["apns-priority": "7"]) }, .badPriority),
            ("expiration not seconds", { mock.broadcast(channel: channel, ["apns-expiration": "soon"]) }, .badExpirationDate),
            ("no expiration", { mock.broadcast(channel: channel, ["apns-expiration": nil]) }, .badExpirationDate),
            ("app not served", { mock.broadcast(channel: channel, app: "com.example.other") }, .topicMismatch),
            ("app disabled", { mock.broadcast(channel: channel, app: "com.example.off") }, .featureNotEnabled),
            ("suffix in the path", { mock.broadcast(channel: channel, app: app + ".push-type.liveactivity") }, .topicDisallowed),
            ("suffix in apns-topic", { mock.broadcast(channel: channel, ["apns-topic": app + ".voip"]) }, .topicDisallowed),
            ("channel id not base64", { mock.broadcast(channel: "not base64!") }, .badChannelId),
            ("no channel id", { mock.broadcast(channel: channel, ["apns-channel-id": nil]) }, .missingChannelId),
            ("unknown channel", { mock.broadcast(channel: BroadcastRequests.unknownChannel) }, .channelNotRegistered),
            ("request id not a UUID", { mock.broadcast(channel: channel, ["apns-request-id": "abc"]) }, .badMessageId),
            ("not a JSON object", { mock.broadcast(channel: channel, body: Array("[1]".utf8)) }, .badRequestPayload),
        ]
        for (name, request, reason) in cases {
            #expect(mock.broadcast(channel: channel).status == 200, "before \(name)")
            #expect(request().reason == reason, "\(name)")
        }
        // The same headers as the broadcast accepted just before, to a No-Message-Stored channel.
        let stored = ["apns-expiration": "1700000000"]
        #expect(mock.broadcast(channel: channel, stored).status == 200)
        #expect(mock.broadcast(channel: noStorage, stored).reason == .badExpirationDate)
        #expect(mock.broadcast(channel: noStorage).status == 200)
    }

    @Test func channelRequestsAnswerTheirReasons() {
        let mock = BroadcastRulesHarness { $0.maxChannelsPerApp = 2 }
        let cases: [(String, MockBroadcastAnswer, Reason)] = [
            ("empty create", mock.createRaw([]), .payloadEmpty),
            ("not an object", mock.createRaw(Array("[]".utf8)), .badRequestPayload),
            ("no push-type", mock.createRaw(Array(#"{"message-storage-policy":1}"#.utf8)), .badRequestPayload),
            ("policy 2", mock.create(policy: 2), .badRequestParams),
            ("policy as text", mock.createRaw(Array(#"{"message-storage-policy":"1","push-type":"LiveActivity"}"#.utf8)), .badRequestParams),
            ("push-type alert", mock.createRaw(Array(#"{"message-storage-policy":0,"push-type":"alert"}"#.utf8)), .badRequestParams),
            ("PUT", mock.channelRequest("PUT", channel: nil), .methodNotAllowed),
            ("POST all-channels", mock.channelRequest("POST", channel: nil, resource: "all-channels"), .methodNotAllowed),
            ("another resource", mock.channelRequest("GET", channel: nil, resource: "channel"), .badPath),
            ("read without id", mock.channelRequest("GET", channel: nil), .missingChannelId),
            ("delete a bad id", mock.channelRequest("DELETE", channel: "%%%"), .badChannelId),
            ("read unknown", mock.channelRequest("GET", channel: BroadcastRequests.unknownChannel), .channelNotRegistered),
            ("delete unknown", mock.channelRequest("DELETE", channel: BroadcastRequests.unknownChannel), .channelNotRegistered),
        ]
        for (name, answer, reason) in cases {
            #expect(answer.reason == reason, "\(name)")
            #expect(answer.status == reason.status, "\(name)")
        }
        let first = mock.create(policy: 0), second = mock.create(policy: 1)
        #expect(first.status == 201 && second.status == 201)
        #expect(first.channelID != second.channelID)
        let third = mock.create()
        #expect(third.reason == .cannotCreateChannelConfig)
        #expect(third.status == 400)
        let read = mock.channelRequest("GET", channel: first.channelID)
        #expect(read.status == 200)
        #expect(String(decoding: read.body, as: UTF8.self) == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        let list = mock.channelRequest("GET", channel: nil, resource: "all-channels")
        #expect(String(decoding: list.body, as: UTF8.self) == "{\"channels\":[\"\(first.channelID ?? "")\",\"\(second.channelID ?? "")\"]}")
        #expect(mock.channelRequest("DELETE", channel: first.channelID).status == 204)
        // Gone for good: read, delete and broadcast no longer know it; its place is free again.
        #expect(mock.channelRequest("GET", channel: first.channelID).reason == .channelNotRegistered)
        #expect(mock.channelRequest("DELETE", channel: first.channelID).reason == .channelNotRegistered)
        #expect(mock.broadcast(channel: first.channelID ?? "").reason == .channelNotRegistered)
        #expect(mock.create().status == 201)
        #expect(mock.channels.channels(of: BroadcastRequests.app).count == 2)
    }

    @Test func admitAnyChannelTakesEveryWellFormedIDForBroadcastsOnly() {
        let mock = BroadcastRulesHarness { $0.admitAnyChannel = true }
        #expect(mock.broadcast(channel: BroadcastRequests.unknownChannel, ["apns-expiration": "1700000000"]).status == 200)
        #expect(mock.broadcast(channel: "not base64!").reason == .badChannelId)
        #expect(mock.channelRequest("GET", channel: BroadcastRequests.unknownChannel).reason == .channelNotRegistered)
        // A created no-storage channel keeps its rule.
        let noStorage = mock.newChannel(policy: 0)
        #expect(mock.broadcast(channel: noStorage, ["apns-expiration": "1700000000"]).reason == .badExpirationDate)
    }

    @Test func theRandomFaultsApplyToBroadcastsByChannel() {
        let throttled = BroadcastRulesHarness { $0.tooManyRequestsRate = 1 }
        let answer = throttled.broadcast(channel: throttled.newChannel())
        #expect(answer.status == 429)
        #expect(answer.reason == .tooManyRequests)
        let failing = BroadcastRulesHarness { $0.failures = [MockAPNsFailureRate(status: 503, rate: 1)] }
        #expect(failing.broadcast(channel: failing.newChannel()).reason == .serviceUnavailable)
        let refusing = BroadcastRulesHarness { $0.refuseStreamsRate = 1 }
        #expect(refusing.broadcast(channel: refusing.newChannel()).isRefusal)
        // A rejected broadcast draws no fault: the checks come first.
        #expect(throttled.broadcast(channel: BroadcastRequests.unknownChannel).reason == .channelNotRegistered)
    }

    @Test func aRespondFileLineNamingAChannelScriptsItsBroadcasts() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("respond.csv")
        try "\(BroadcastRequests.unknownChannel),403,BadCertificate\nAAAAAAAAAAAAAAAAAAAAAA==,503,Shutdown,1\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let scripted = try MockAPNsFiles.scripted(path: file)
        let mock = BroadcastRulesHarness {
            $0.scripted = scripted
            $0.admitAnyChannel = true
        }
        let refused = mock.broadcast(channel: BroadcastRequests.unknownChannel)
        #expect(refused.status == 403)
        #expect(refused.reasonText == "BadCertificate")
        let once = ["AAAAAAAAAAAAAAAAAAAAAA==", "AAAAAAAAAAAAAAAAAAAAAA=="].map { mock.broadcast(channel: $0) }
        #expect(once.map(\.status) == [503, 200])
        #expect(once[0].reasonText == "Shutdown")
    }

    @Test func eachListenerServesOnlyItsOwnPaths() {
        let store = BroadcastRulesHarness(role: .management)
        let channel = store.newChannel()
        #expect(!channel.isEmpty)
        #expect(store.broadcast(channel: channel).reason == .badPath)
        let pushes = BroadcastRulesHarness(role: .pushes)
        #expect(pushes.create().reason == .badPath)
        #expect(pushes.channelRequest("GET", channel: nil, resource: "all-channels").reason == .badPath)
        #expect(MockListenerRole.management.routesToBroadcastSide("/3/device/abcd"))
        #expect(!MockListenerRole.pushes.routesToBroadcastSide("/3/device/abcd"))
        #expect(MockListenerRole.all.routesToBroadcastSide("/1/apps/x/channels"))
    }

    @Test func providerTokensAreCheckedAsForDevicePushes() throws {
        let tokens = try TokenFixture()
        let verifier = try tokens.verifier()
        let mock = BroadcastRulesHarness { $0.authentication = .token(verifier) }
        let good = try tokens.token(issuedAt: now)
        let create = mock.answer(path: "/1/apps/\(BroadcastRequests.app)/channels", headers: [("authorization", "bearer " + good)],
                                 body: BroadcastRequests.createBody(policy: 1))
        #expect(create.status == 201)
        #expect(create.passedAuthorization)
        let forged = BroadcastRulesHarness { $0.authentication = .token(verifier) }
        let stranger = try TokenFixture().token(issuedAt: now)
        let refused = forged.answer(method: "GET", path: "/1/apps/\(BroadcastRequests.app)/all-channels",
                                    headers: [("authorization", "bearer " + stranger)])
        #expect(refused.reason == .invalidProviderToken)
        let old = BroadcastRulesHarness { $0.authentication = .token(verifier) }
        let expired = old.broadcast(channel: BroadcastRequests.unknownChannel, ["authorization": "bearer " + (try tokens.token(issuedAt: now - 7200))])
        #expect(expired.reason == .expiredProviderToken)
    }
}
