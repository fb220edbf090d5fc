import APNs
import Foundation
import Testing

@Suite struct ResponseTests {
    private func response(_ status: Int, _ body: String) -> Response {
        Response(status: status, apnsID: "3c7d1e7a-9a4b-4c8e-8f2d-0a1b2c3d4e5f", body: Array(body.utf8))
    }

    @Test func twoHundredWithEmptyBodyIsDelivered() {
        let answer = response(200, "")
        #expect(answer.disposition == .delivered)
        #expect(answer.reason == nil && answer.reasonText == nil && answer.timestamp == nil)
        #expect(answer.apnsID == "3c7d1e7a-9a4b-4c8e-8f2d-0a1b2c3d4e5f")
    }

    @Test func unregisteredCarriesItsTimestampInMilliseconds() {
        let answer = response(410, "{\"reason\":\"Unregistered\",\"timestamp\":1700000000123}")
        #expect(answer.reason == .unregistered)
        #expect(answer.timestamp == 1_700_000_000_123)
        #expect(answer.disposition == .deadToken)
    }

    @Test func timestampIsKeptOnlyOnA410() {
        #expect(response(400, "{\"reason\":\"BadDeviceToken\",\"timestamp\":1700000000123}").timestamp == nil)
    }

    @Test(arguments: ["1.5e12", "\"1700000000123\"", "-5", "null", "99999999999999999999", "[1]"])
    func timestampThatIsNotAnIntegerIsIgnored(value: String) {
        let answer = response(410, "{\"reason\":\"ExpiredToken\",\"timestamp\":\(value)}")
        #expect(answer.timestamp == nil)
        #expect(answer.reason == .expiredToken)
    }

    @Test func knownReasonDecidesTheDisposition() {
        #expect(response(400, "{\"reason\":\"BadDeviceToken\"}").disposition == .badToken)
        #expect(response(403, "{\"reason\":\"ExpiredProviderToken\"}").disposition == .refreshToken)
        #expect(response(429, "{\"reason\":\"TooManyProviderTokenUpdates\"}").disposition == .retryLater(.keepProviderToken))
        #expect(response(503, "{\"reason\":\"Shutdown\"}").disposition == .retryLater(.connection))
    }

    @Test func unknownReasonKeepsItsTextAndFollowsTheStatus() {
        let answer = response(400, "{\"reason\":\"SomethingNew\"}")
        #expect(answer.reason == nil)
        #expect(answer.reasonText == "SomethingNew")
        #expect(answer.disposition == .permanent)
        #expect(response(403, "{\"reason\":\"SomethingNew\"}").disposition == .credentialsRefused)
        #expect(response(503, "{\"reason\":\"SomethingNew\"}").disposition == .retryLater(.connection))
    }

    @Test func otherSpellingIsReadButKeptAsSent() {
        let answer = response(403, "{\"reason\":\"BadEnvironmentKeyInToken\"}")
        #expect(answer.reason == .badEnvironmentKeyIdInToken)
        #expect(answer.reasonText == "BadEnvironmentKeyInToken")
        #expect(answer.disposition == .credentialsRefused)
    }

    @Test(arguments: [
        "", " ", "not json", "<html><body>Bad Gateway</body></html>", "{\"reason\":\"Unregistered\"",
        "{\"reason\":", "{\"reason\":\"Unregis", "[\"Unregistered\"]", "\"Unregistered\"",
        "{\"reason\":\"Unregistered\"}garbage", "\u{FEFF}{\"reason\":\"Unregistered\"}",
    ])
    func garbageBodyLeavesTheStatusToDecide(body: String) {
        let dead = response(410, body)
        #expect(dead.reason == nil && dead.reasonText == nil && dead.timestamp == nil)
        #expect(dead.disposition == .deadToken)
        #expect(response(500, body).disposition == .retryLater(.connection))
        #expect(response(400, body).disposition == .permanent)
    }

    @Test func invalidUTF8BodyIsGarbage() {
        let answer = Response(status: 429, apnsID: nil, body: [0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])
        #expect(answer.reasonText == nil)
        #expect(answer.disposition == .retryLater(.perDeviceToken))
    }

    @Test func reasonThatIsNotAStringIsIgnored() {
        #expect(response(400, "{\"reason\":42}").reasonText == nil)
        #expect(response(400, "{\"reason\":{\"name\":\"BadTopic\"}}").reasonText == nil)
    }

    @Test func onlyTopLevelMembersCount() {
        let answer = response(503, " { \"x\" : {\"reason\":\"Nope\",\"a\":[1,{\"b\":\"}\"}]} , \"reason\" : \"Shutdown\" } ")
        #expect(answer.reason == .shutdown)
    }

    @Test func escapesInTheReasonAreDecoded() {
        #expect(response(400, "{\"reason\":\"Bad\\u0044evice\\u0054oken\"}").reason == .badDeviceToken)
        #expect(response(400, "{\"reason\":\"caf\\u00e9 \\ud83d\\ude00\\n\"}").reasonText == "café 😀\n")
    }

    @Test(arguments: Reason.allCases)
    func encodedErrorBodyDecodesToTheSameReason(reason: Reason) {
        let body = Response.errorBody(reason, timestamp: reason.status == 410 ? 1_700_000_000_123 : nil)
        let answer = Response(status: reason.status, apnsID: nil, body: body)
        #expect(answer.reason == reason)
        #expect(answer.disposition == reason.disposition)
        #expect(answer.timestamp == (reason.status == 410 ? 1_700_000_000_123 : nil))
    }

    @Test func errorBodyIsAPNsJSON() throws {
        #expect(String(decoding: Response.errorBody(.badTopic), as: UTF8.self) == "{\"reason\":\"BadTopic\"}")
        #expect(String(decoding: Response.errorBody(.unregistered, timestamp: 1_700_000_000_123), as: UTF8.self)
                == "{\"reason\":\"Unregistered\",\"timestamp\":1700000000123}")
        // Foundation, as an independent reader, agrees.
        let body = Response.errorBody(reasonText: "Odd \"quoted\" \\ reason\u{1}", timestamp: 7)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["reason"] as? String == "Odd \"quoted\" \\ reason\u{1}")
        #expect((object["timestamp"] as? NSNumber)?.int64Value == 7)
        #expect(ErrorBody(decoding: body) == ErrorBody(reasonText: "Odd \"quoted\" \\ reason\u{1}", timestamp: 7))
    }

    @Test func goAwayDebugDataDecodesWithErrorBody() {
        #expect(ErrorBody(decoding: Array("{\"reason\": \"Shutdown\"}".utf8))?.reason == .shutdown)
        #expect(ErrorBody(decoding: Array("Shutdown".utf8)) == nil)
    }
}

@Suite struct ErrorBodyRobustnessTests {
    /// Every corpus document and every error body, cut at every length and with every byte
    /// replaced by structural and invalid bytes: decoding never traps, and it yields a body
    /// exactly when the validator accepts the bytes.
    @Test func mutatedBodiesNeverTrapTheDecoder() {
        let seeds = (validJSON + invalidJSON).map(\.bytes).filter { $0.count < 200 }
            + Reason.allCases.map { Response.errorBody($0, timestamp: 1_700_000_000_123) }
        let replacements: [UInt8] = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x30, 0x2d, 0x20, 0x75, 0x80, 0xff]
        var decoded = 0
        func check(_ bytes: [UInt8]) {
            let body = ErrorBody(decoding: bytes)
            #expect((body != nil) == (JSONValidator.validate(bytes) == nil))
            if body != nil { decoded += 1 }
        }
        for seed in seeds {
            for length in 0...seed.count { check(Array(seed.prefix(length))) }
            for position in seed.indices {
                for byte in replacements {
                    var mutated = seed
                    mutated[position] = byte
                    check(mutated)
                }
            }
        }
        #expect(decoded > 1000)
    }
}
