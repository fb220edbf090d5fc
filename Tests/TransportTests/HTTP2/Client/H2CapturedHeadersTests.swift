import Testing
import Transport

/// The response headers a client session keeps for its caller: one as text, one when it is a UUID,
/// named by the session's creator (here as an APNs client names them, `H2CapturedHeaders.apns`).
@Suite struct H2CapturedHeadersTests {
    /// Answers every request with an `apns-id`, an `apns-unique-id` and an `x-request-id`.
    static func pair(capturing headers: H2CapturedHeaders) throws -> H2TestPair {
        let pair = try H2TestPair(client: .init(authority: "api.push.apple.com", maxStreams: 100, capturedHeaders: headers))
        pair.answer = { _ in
            .init(status: 200, headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"),
                                         H2Header("x-request-id", "request-1"),
                                         H2Header("apns-unique-id", "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5"),
                                         H2Header("x-trace-id", "11111111-2222-3333-4444-555555555555")])
        }
        try pair.pump()
        try pair.submit(tag: 1, token: "abcdef")
        try pair.pump()
        return pair
    }

    @Test func aSessionKeepsTheHeadersItsCreatorNamesAndNoOthers() throws {
        let named = try Self.pair(capturing: H2CapturedHeaders(text: "x-request-id", uuid: "x-trace-id"))
        try #require(named.responses.count == 1)
        #expect(named.responses[0].apnsID == "request-1")
        #expect(named.responses[0].uniqueID?.description == "11111111-2222-3333-4444-555555555555")

        let none = try Self.pair(capturing: .none)
        try #require(none.responses.count == 1)
        #expect(none.responses[0].apnsID == nil && none.responses[0].uniqueID == nil)
        #expect(none.responses[0].status == 200)

        let apns = try Self.pair(capturing: .apns)
        try #require(apns.responses.count == 1)
        #expect(apns.responses[0].apnsID == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(apns.responses[0].uniqueID?.description == "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5")
    }

    @Test func anAnswersUniqueIDReachesTheResponseOnlyWhenItIsAUUID() throws {
        let pair = try H2TestPair()
        pair.answer = { request in
            if request.path.hasSuffix("00") {
                return .init(status: 200, headers: [H2Header("apns-unique-id", "not a uuid \" \\ junk")])
            }
            if request.path.hasSuffix("02") {
                return .init(status: 200, headers: [H2Header("apns-unique-id", "00000000-0000-0000-0000-000000000000")])
            }
            return .init(status: 200, headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"),
                                                H2Header("apns-unique-id", "0D6E2BA9-2d63-4e63-9a6c-0d4a2c40cda5")])
        }
        try pair.pump()
        try pair.submit(tag: 1, token: "abcdef")
        try pair.pump()
        try pair.submit(tag: 2, token: "abcd00")
        try pair.pump()
        try pair.submit(tag: 3, token: "abcd01")
        try pair.pump()
        try pair.submit(tag: 4, token: "abcd02")
        try pair.pump()
        let responses = pair.responses
        try #require(responses.count == 4)
        #expect(responses[0].uniqueID?.description == "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5")
        #expect(responses[0].apnsID == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(responses[1].uniqueID == nil)
        #expect(responses[2].uniqueID?.description == "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5")
        // The nil UUID is no one's id.
        #expect(responses[3].uniqueID == nil)
    }
}
