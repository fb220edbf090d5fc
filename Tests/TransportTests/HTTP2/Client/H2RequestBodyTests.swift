import Testing
import Transport

/// Request bodies go from the caller's bytes straight into the output, frame by frame
/// (NGHTTP2_DATA_FLAG_NO_COPY): what the server reads must be the body, whole and in order.
@Suite struct H2RequestBodyTests {
    @Test func aBodyLongerThanOneFrameArrivesWholeAndInOrder() throws {
        let pair = try H2TestPair(server: .init(maxConcurrentStreams: 100, maxRequestBodyBytes: 64 * 1024))
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        // Three DATA frames at the default 16 KiB frame size, the last one short.
        let long = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let short = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        try pair.submit(tag: 1, body: long)
        try pair.submit(tag: 2, body: short)
        try pair.submit(tag: 3, body: long.reversed())
        try pair.pump()
        #expect(pair.requests.count == 3)
        #expect(pair.requests.map(\.body) == [long, short, long.reversed()])
        #expect(pair.requests.allSatisfy { !$0.bodyExceededLimit })
        #expect(Set(pair.responses.map(\.tag)) == [1, 2, 3])
    }
}
