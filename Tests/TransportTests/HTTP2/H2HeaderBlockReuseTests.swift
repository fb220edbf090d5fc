import Testing
import Transport

/// A session reuses its header block from one template request to the next, changing only `:path`
/// (kept in the stream's slot, read uncopied by nghttp2). What goes on the wire must be what a block
/// built from strings for every request encodes: the same HPACK bytes, frame for frame.
@Suite struct H2HeaderBlockReuseTests {
    static let authorization = H2Header("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.e30." + String(repeating: "s", count: 86))
    static let first = H2RequestTemplate(pathPrefix: "/3/device/", headers: [
        authorization, H2Header("apns-topic", "com.example.app"), H2Header("apns-push-type", "alert"),
        H2Header("apns-expiration", "0"),
    ])
    static let second = H2RequestTemplate(pathPrefix: "/3/device/", headers: [
        H2Header("authorization", "bearer other." + String(repeating: "t", count: 90)), H2Header("apns-topic", "com.example.app"),
    ])

    /// Another `:path` prefix: a slot that held the first one's must not keep it.
    static let otherPrefix = H2RequestTemplate(pathPrefix: "/3/devices/other/", headers: [authorization])

    static func prefix(of template: H2RequestTemplate) -> String {
        template === otherPrefix ? "/3/devices/other/" : "/3/device/"
    }

    /// One request: its template, the row's own headers and token, and whether it goes by strings
    /// (`submit(path:...)`) or from one buffer on the template session too.
    struct Request {
        var template: H2RequestTemplate
        var own: [H2Header] = []
        var token: String
        var byStrings = false
        var oneBuffer = false
    }

    /// A distinct token per seed (hex digits of the seed, then a pattern).
    static func token(_ seed: Int, length: Int = 64) -> String {
        let head = String(seed, radix: 16) + "f"
        return head + String((head.count..<length).map { Array("0123456789abcdef")[($0 &* 7 &+ seed) % 16] })
    }

    /// Where two byte strings first differ (nil: they are the same), for a readable failure.
    static func firstDifference(_ left: [UInt8], _ right: [UInt8]) -> Int? {
        if left == right { return nil }
        return zip(left, right).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(left.count, right.count)
    }

    /// Submits `requests` on both sessions and returns what each wrote.
    static func submitted(_ requests: [Request], tags: Range<UInt64>, reused: H2TestPair,
                          rebuilt: H2TestPair) throws -> (reused: [UInt8], rebuilt: [UInt8]) {
        for (request, tag) in zip(requests, tags) {
            let body = Array(#"{"aps":{"alert":"row \#(tag)"}}"#.utf8)
            let path = Self.prefix(of: request.template) + request.token
            try rebuilt.client.submit(path: path, headers: request.template.headers + request.own, body: body, tag: tag)
            if request.byStrings {
                try reused.client.submit(path: path, headers: request.template.headers + request.own, body: body, tag: tag)
            } else if request.oneBuffer {
                let row = Array("xx".utf8) + Array(request.token.utf8) + body
                try reused.client.submit(template: request.template, bytes: row, pathSuffix: 2..<2 + request.token.utf8.count,
                                         body: 2 + request.token.utf8.count..<row.count, headers: request.own, tag: tag)
            } else {
                try reused.client.submit(template: request.template, pathSuffix: Array(request.token.utf8)[...],
                                         headers: request.own, body: body[...], tag: tag)
            }
        }
        var reusedBytes: [UInt8] = [], rebuiltBytes: [UInt8] = []
        try reused.client.drainOutput(into: &reusedBytes, limit: .max)
        try rebuilt.client.drainOutput(into: &rebuiltBytes, limit: .max)
        try reused.server.receive(reusedBytes)
        try rebuilt.server.receive(rebuiltBytes)
        try reused.pump()
        try rebuilt.pump()
        return (reusedBytes, rebuiltBytes)
    }

    @Test func aReusedHeaderBlockPutsTheSameBytesOnTheWireAsOneBuiltPerRequest() throws {
        let reused = try H2TestPair(), rebuilt = try H2TestPair()
        for pair in [reused, rebuilt] {
            pair.answer = { _ in .init(status: 200) }
            try pair.pump()
        }
        let collapse = H2Header("apns-collapse-id", "c1")
        // Every way the block changes: the first request's indexing, the same template again,
        // a row's own headers, a string request between, a path too long for the slot, another
        // template, the one-buffer form; all submitted before any is encoded.
        let firstRound: [Request] = [
            Request(template: Self.first, token: Self.token(1)),
            Request(template: Self.first, token: Self.token(2)),
            Request(template: Self.first, token: Self.token(3)),
            Request(template: Self.first, own: [collapse], token: Self.token(4)),
            Request(template: Self.first, token: Self.token(5)),
            Request(template: Self.first, token: Self.token(6), byStrings: true),
            Request(template: Self.first, token: Self.token(7)),
            Request(template: Self.first, token: Self.token(8, length: 200)),
            Request(template: Self.first, token: Self.token(9)),
            Request(template: Self.second, token: Self.token(10)),
            Request(template: Self.second, token: Self.token(11)),
            Request(template: Self.first, token: Self.token(12), oneBuffer: true),
            Request(template: Self.otherPrefix, token: Self.token(13)),
            Request(template: Self.first, token: Self.token(14)),
        ]
        let round1 = try Self.submitted(firstRound, tags: 1..<15, reused: reused, rebuilt: rebuilt)
        #expect(round1.reused.count > 14 * 100)
        #expect(Self.firstDifference(round1.reused, round1.rebuilt) == nil,
                "HPACK and DATA bytes as a block built per request makes them")

        // The slots freed by the answers are taken again, their `:path` storage written over, with
        // the prefix changing now and then.
        let secondRound = (15..<105).map {
            Request(template: $0 % 7 == 0 ? Self.otherPrefix : Self.first, token: Self.token($0))
        }
        let round2 = try Self.submitted(secondRound, tags: 15..<105, reused: reused, rebuilt: rebuilt)
        #expect(Self.firstDifference(round2.reused, round2.rebuilt) == nil)

        let paths = reused.requests.map(\.path)
        #expect(paths == (firstRound + secondRound).map {
            Self.prefix(of: $0.template) + $0.token
        })
        #expect(paths == rebuilt.requests.map(\.path))
        #expect(reused.requests.map { $0.fields.map(\.neverIndexed) } == rebuilt.requests.map { $0.fields.map(\.neverIndexed) })
        #expect(reused.responses.map(\.tag).sorted() == Array(1..<105))
        #expect(reused.client.inFlightCount == 0)
    }
}
