import Testing
import Transport

@Suite struct H2RequestTemplateTests {
    static let template = H2RequestTemplate(pathPrefix: "/3/device/", headers: [
        H2Header("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln", rules: .apns),
        H2Header("apns-topic", "com.example.app", rules: .apns),
        H2Header("apns-expiration", "0", rules: .apns),
    ])

    @Test func templateRequestCarriesPrefixSuffixTemplateFieldsThenItsOwn() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200, headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")]) }
        try pair.pump()
        let row = Array("xx0123abcdyy{\"aps\":{}}zz".utf8)
        try pair.client.submit(template: Self.template, pathSuffix: row[2..<10],
                               headers: [H2Header("apns-collapse-id", "c1")], body: row[12..<22], tag: 5, submittedAt: 9)
        try pair.pump()

        let request = try #require(pair.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/0123abcd")
        #expect(request.authority == "api.push.apple.com")
        #expect(request.fields.map(\.name) == [":method", ":scheme", ":authority", ":path", "authorization",
                                               "apns-topic", "apns-expiration", "apns-collapse-id"])
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{}}"#)
        let response = try #require(pair.responses.first)
        #expect(response.tag == 5 && response.submittedAt == 9)
        #expect(response.apnsID == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
    }

    /// The one-buffer form: the path suffix and the body are ranges of one array, which goes to the
    /// stream whole; the request is the same as the slices' form makes.
    @Test func aRequestFromRangesOfOneBufferCarriesThoseBytes() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        let row = Array("xx0123abcdyy{\"aps\":{}}zz".utf8)
        try pair.client.submit(template: Self.template, bytes: row, pathSuffix: 2..<10, body: 12..<22,
                               headers: [H2Header("apns-collapse-id", "c1")], tag: 6, submittedAt: 11)
        try pair.pump()
        let request = try #require(pair.requests.first)
        #expect(request.path == "/3/device/0123abcd")
        #expect(request.fields.map(\.name).last == "apns-collapse-id")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{}}"#)
        #expect(pair.responses.first?.tag == 6 && pair.responses.first?.submittedAt == 11)
    }

    /// A body longer than a DATA frame is read from its slice in several steps, each from where
    /// the last stopped, and ends the stream exactly at its end.
    @Test func aBodyLongerThanOneFrameArrivesWhole() throws {
        let pair = try H2TestPair(server: .init(maxConcurrentStreams: 10, maxRequestBodyBytes: 64 * 1024))
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        let buffer = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let body = buffer[1_000..<41_000]
        try pair.client.submit(template: Self.template, pathSuffix: Array("abcd".utf8)[...], body: body, tag: 1)
        try pair.pump()
        let request = try #require(pair.requests.first)
        #expect(request.bodyLength == body.count)
        let arrivedWhole = request.body.elementsEqual(body)
        #expect(arrivedWhole, "every byte where it was, none twice")
        #expect(pair.responses.first?.tag == 1)
    }

    @Test func templateFieldsFollowApplesIndexingRules() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        for tag: UInt64 in 1...2 {
            try pair.client.submit(template: Self.template, pathSuffix: Array("abcd".utf8)[...], body: Array("{}".utf8)[...],
                                   tag: tag)
            try pair.pump()
        }
        try #require(pair.requests.count == 2)
        for request in pair.requests {
            #expect(request.fields.first { $0.name == ":path" }?.neverIndexed == true)
            #expect(request.fields.first { $0.name == "authorization" }?.neverIndexed == true)
            #expect(request.fields.first { $0.name == "apns-topic" }?.neverIndexed == false)
        }
        let expirations = pair.requests.map { $0.fields.first { $0.name == "apns-expiration" }?.neverIndexed }
        #expect(expirations == [false, true])
        #expect(Self.template.headers.map(\.name) == ["authorization", "apns-topic", "apns-expiration"])
    }

    /// A broadcast's channel, the template's suffix field: indexed on the session's first request
    /// only, so that its name enters HPACK's dynamic table, never indexed on every later one (as
    /// `apns-id` is); those later requests then name it by its index, not as a Huffman-coded
    /// literal: their HEADERS are shorter than when the field is never indexed from the start.
    @Test func theSuffixFieldIsIndexedOnTheFirstRequestOnlyAndLaterNamedByIndex() throws {
        let template = H2RequestTemplate(pathPrefix: "/4/broadcasts/apps/com.example.app",
                                         headers: [H2Header("apns-push-type", "liveactivity")], suffixField: "apns-channel-id")
        let suffixed = try H2TestPair(), literal = try H2TestPair()
        for pair in [suffixed, literal] {
            pair.answer = { _ in .init(status: 200) }
            try pair.pump()
        }
        let channels = (1...3).map { "Y2hhbm5lbC0\($0)MDAwMA==" }
        var sizes: [(suffixed: Int, literal: Int)] = []
        for (index, channel) in channels.enumerated() {
            let tag = UInt64(index + 1), body = Array("{}".utf8)
            try suffixed.client.submit(template: template, pathSuffix: Array(channel.utf8)[...], body: body[...], tag: tag)
            try literal.client.submit(path: "/4/broadcasts/apps/com.example.app",
                                      headers: template.headers + [H2Header("apns-channel-id", channel, indexing: .neverIndexed)],
                                      body: body, tag: tag)
            var sent: (suffixed: [UInt8], literal: [UInt8]) = ([], [])
            try suffixed.client.drainOutput(into: &sent.suffixed, limit: .max)
            try literal.client.drainOutput(into: &sent.literal, limit: .max)
            sizes.append((sent.suffixed.count, sent.literal.count))
            try suffixed.server.receive(sent.suffixed)
            try literal.server.receive(sent.literal)
            try suffixed.pump()
            try literal.pump()
        }
        try #require(suffixed.requests.count == 3)
        #expect(suffixed.requests.map { $0.fields.first { $0.name == "apns-channel-id" }?.value } == channels)
        #expect(suffixed.requests.map { $0.fields.first { $0.name == "apns-channel-id" }?.neverIndexed } == [false, true, true])
        #expect(suffixed.requests.map { $0.path } == Array(repeating: "/4/broadcasts/apps/com.example.app", count: 3))
        for (suffixedSize, literalSize) in sizes.dropFirst() {
            #expect(suffixedSize + 8 <= literalSize, "the name by index, not a literal: \(sizes)")
        }
    }

    /// nghttp2 reads a template's bytes uncopied when it encodes the HEADERS frame, which happens
    /// after submit: the session must keep the template alive though its maker let it go, and
    /// the frame must carry its values, not whatever later took that memory.
    @Test func aTemplateDroppedRightAfterSubmitStillEncodesItsValues() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        for tag: UInt64 in 1...20 {
            // A fresh template per request, released as soon as submit returns, before any output.
            try pair.client.submit(template: H2RequestTemplate(pathPrefix: "/3/device/", headers: [
                                       H2Header("authorization", "bearer token-\(tag)-" + String(repeating: "j", count: 180)),
                                       H2Header("apns-topic", "com.example.app\(tag)"),
                                   ]),
                                   pathSuffix: Array("abcd".utf8)[...], body: Array("{}".utf8)[...], tag: tag)
            // Memory freed by the template would likely be reused by these.
            _ = (0..<8).map { _ in [UInt8](repeating: 0x41, count: 240) }
        }
        try pair.pump()
        try #require(pair.requests.count == 20)
        for (index, request) in pair.requests.enumerated() {
            let tag = index + 1
            #expect(request.fields.first { $0.name == "authorization" }?.value
                    == "bearer token-\(tag)-" + String(repeating: "j", count: 180))
            #expect(request.fields.first { $0.name == "apns-topic" }?.value == "com.example.app\(tag)")
            #expect(request.method == "POST" && request.authority == "api.push.apple.com")
        }
    }
}
