import APNs
import Testing
import Transport
@testable import MockAPNs

/// A connection's repeated `authorization` and `apns-topic` values are recognised by their bytes
/// and answered without a second full check; the answers must be those of the full checks.
@Suite struct MockAPNsRepeatedValueTests {
    let tokens: TokenFixture
    let rules: MockAPNsRules
    let jwt: String

    init() throws {
        tokens = try TokenFixture()
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .token(try tokens.verifier())
        configuration.topics = ["com.example.app"]
        rules = MockAPNsRules(configuration: configuration)
        jwt = try tokens.token(issuedAt: now)
    }

    @Test func anAcceptedTopicIsJudgedAgainForAnotherPushType() {
        var connection = MockConnectionAuth()
        #expect(rules.answer(request(jwt: jwt), connection: &connection).status == 200)
        let voip = rules.answer(request(jwt: jwt, headers: ["apns-push-type": "voip"]), connection: &connection)
        #expect(voip.reason == "BadTopic")
        let absent = rules.answer(request(jwt: jwt, headers: ["apns-push-type": nil]), connection: &connection)
        #expect(absent.status == 200)  // no push type means alert, as on the first request
        let other = rules.answer(request(jwt: jwt, headers: ["apns-topic": "com.example.other"]), connection: &connection)
        #expect(other.reason == "TopicDisallowed")
        #expect(rules.answer(request(jwt: jwt), connection: &connection).status == 200)
    }

    @Test func theSameTokenUnderAnotherSchemeSpellingIsNotATokenUpdate() throws {
        var connection = MockConnectionAuth()
        #expect(rules.answer(request(jwt: jwt), connection: &connection).status == 200)
        let shouted = rules.answer(request(jwt: nil, headers: ["authorization": "BEARER " + jwt]), connection: &connection)
        #expect(shouted.status == 200)
        let tooSoon = try tokens.token(issuedAt: now + 60)
        #expect(rules.answer(request(jwt: tooSoon), connection: &connection).reason == "TooManyProviderTokenUpdates")
        #expect(rules.answer(request(jwt: jwt), connection: &connection).status == 200)
    }

    @Test func theDeviceTokenIsCutFromThePathAsHeaderRulesCutsIt() {
        let paths = ["/3/device/" + goodToken, "/3/device/", "/3/device", "/3/devicex/ab", "", "/", "/3/device/ab/cd",
                     "/3/device/é", "/4/device/ab", "/3/Device/ab", "/3/device/" + String(repeating: "a", count: 300)]
        for path in paths {
            #expect(MockAPNsRules.deviceTokenHex(inPath: path) == HeaderRules.deviceTokenHex(inPath: path), "\(path)")
        }
    }

    @Test func madeApnsIDsAreLowercaseVersion4UUIDs() {
        var random = MockRandom(seed: 7)
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = MockAPNsID.generated(using: &random).valueText
            let bytes = Array(id.utf8)
            #expect(bytes.count == 36)
            for (offset, byte) in bytes.enumerated() {
                if [8, 13, 18, 23].contains(offset) {
                    #expect(byte == UInt8(ascii: "-"))
                } else {
                    #expect((UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte))
                }
            }
            #expect(bytes[14] == UInt8(ascii: "4"))
            #expect("89ab".utf8.contains(bytes[19]))
            #expect(HeaderRules.checkAPNsID(id) == nil)
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }
}
