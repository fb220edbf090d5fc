import CNGHTTP2
import Testing
@testable import Transport

/// The server's rapid-reset guard counts resets that cancel work, not resets of streams that had
/// already ended (async-http-client sends one after every response).
@Suite struct H2ResetRateLimitTests {
    /// Sends RST_STREAM(CANCEL) for `streamID` from the client side, as async-http-client does.
    static func cancel(_ streamID: Int32, on pair: H2TestPair) throws {
        let session = try #require(pair.client.session)
        #expect(nghttp2_submit_rst_stream(session, 0, streamID, NGHTTP2_CANCEL.rawValue) == 0)
        try pair.pump()
    }

    @Test func resetsOfStreamsThatAlreadyEndedNeverEndTheConnection() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        // Past nghttp2's own burst of 1000, in well under a second.
        for tag in 1...1_500 {
            let streamID = try pair.submit(tag: UInt64(tag))
            try pair.pump()
            try Self.cancel(streamID, on: pair)
        }
        #expect(pair.client.receivedGoaway == nil)
        #expect(pair.requests.count == 1_500)
        #expect(pair.clientEvents.filter { if case .response = $0 { true } else { false } }.count == 1_500)
    }

    @Test func resetsOfOpenStreamsStillEndTheConnectionPastTheBurst() throws {
        let pair = try H2TestPair(client: .init(authority: "api.push.apple.com", maxStreams: 2_000),
                                  server: .init(maxConcurrentStreams: 2_000))
        pair.answer = { _ in nil }  // every request stays open
        try pair.pump()
        var streams: [Int32] = []
        for tag in 1...1_100 { streams.append(try pair.submit(tag: UInt64(tag))) }
        try pair.pump()
        for streamID in streams { try Self.cancel(streamID, on: pair) }
        let goaway = try #require(pair.client.receivedGoaway, "the rapid resets were not limited")
        #expect(goaway.errorCode == NGHTTP2_INTERNAL_ERROR.rawValue)
    }

    @Test func theBucketRefillsAtItsRateUpToItsBurst() {
        var limit = H2ResetRateLimit(burst: 3, rate: 1, nowSeconds: 100)
        var taken: [Bool] = []
        for now: UInt64 in [100, 100, 100, 100, 101, 101, 1_000, 1_000, 1_000, 1_000] {
            taken.append(limit.take(nowSeconds: now))
        }
        #expect(taken == [true, true, true, false, true, false, true, true, true, false])
    }
}
