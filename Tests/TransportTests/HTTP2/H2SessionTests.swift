import Testing
import Transport

@Suite struct H2SessionTests {
    @Test func requestAndResponseRoundTripWithTagStatusApnsIDAndBody() throws {
        let pair = try H2TestPair()
        pair.answer = { request in
            request.path.hasSuffix("00")
                ? .init(status: 400, headers: [H2Header("apns-id", "11111111-2222-3333-4444-555555555555")],
                        body: Array(#"{"reason":"BadDeviceToken"}"#.utf8))
                : .init(status: 200, headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")])
        }
        try pair.pump()
        try pair.submit(tag: 7, token: "abcdef")
        try pair.pump()
        try pair.submit(tag: 8, token: "abcd00")
        try pair.pump()

        let responses = pair.responses
        try #require(responses.count == 2)
        #expect(responses[0].tag == 7)
        #expect(responses[0].status == 200)
        #expect(responses[0].apnsID == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(responses[0].body.isEmpty)
        #expect(responses[1].tag == 8)
        #expect(responses[1].status == 400)
        #expect(String(decoding: responses[1].body, as: UTF8.self) == #"{"reason":"BadDeviceToken"}"#)
        #expect(pair.client.inFlightCount == 0)

        let request = try #require(pair.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/3/device/abcdef")
        #expect(request.authority == "api.push.apple.com")
        #expect(request.fields.map(\.name) == [":method", ":scheme", ":authority", ":path",
                                               "authorization", "apns-push-type", "apns-topic"])
        #expect(request.values(of: "apns-topic") == ["com.example.app"])
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"aps":{"alert":"hi"}}"#)
        #expect(!request.bodyExceededLimit)
        #expect(pair.server.priorityFramesReceived == 0)
    }

    @Test func headersAreNeverIndexedAsAppleAsks() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        try pair.submit(tag: 1, apnsID: "aaaaaaaa-bbbb-cccc-dddd-000000000001")
        try pair.pump()
        try pair.submit(tag: 2, apnsID: "aaaaaaaa-bbbb-cccc-dddd-000000000002")
        try pair.pump()

        try #require(pair.requests.count == 2)
        func neverIndexed(_ request: H2ServerRequest, _ name: String) -> Bool? {
            request.fields.first { $0.name == name }?.neverIndexed
        }
        for request in pair.requests {
            #expect(neverIndexed(request, ":path") == true)
            #expect(neverIndexed(request, "authorization") == true)
            #expect(neverIndexed(request, "apns-topic") == false)
        }
        #expect(neverIndexed(pair.requests[0], "apns-id") == false)
        #expect(neverIndexed(pair.requests[1], "apns-id") == true)
    }

    @Test func requestBodyOverTheLimitIsReadAndFlagged() throws {
        let pair = try H2TestPair(server: .init(maxConcurrentStreams: 10, maxRequestBodyBytes: 100))
        pair.answer = { _ in .init(status: 413) }
        try pair.pump()
        try pair.submit(tag: 1, body: [UInt8](repeating: 0x41, count: 5000))
        try pair.pump()
        let request = try #require(pair.requests.first)
        #expect(request.bodyExceededLimit)
        #expect(request.bodyLength == 5000)
        #expect(request.body.count == 100)
        #expect(pair.responses.map(\.status) == [413])
    }

    @Test func repeatedHeadersReachTheServer() throws {
        let pair = try H2TestPair()
        try pair.pump()
        try pair.client.submit(path: "/3/device/ab", headers: [H2Header("apns-topic", "a"), H2Header("apns-topic", "b")],
                               body: Array("{}".utf8), tag: 1)
        try pair.pump()
        #expect(pair.requests.first?.values(of: "apns-topic") == ["a", "b"])
    }

    @Test func serverIgnoresAnswersToUnknownOrAnsweredStreams() throws {
        let pair = try H2TestPair()
        try pair.pump()
        let streamID = try pair.submit(tag: 1)
        try pair.pump()
        #expect(try pair.server.respond(streamID: 99, status: 200) == false)
        #expect(try pair.server.respond(streamID: streamID, status: 200) == true)
        #expect(try pair.server.respond(streamID: streamID, status: 500) == false)
        try pair.pump()
        #expect(pair.responses.map(\.status) == [200])
        #expect(try pair.server.respond(streamID: streamID, status: 200) == false)
    }

    @Test func pingIsAcknowledged() throws {
        let pair = try H2TestPair()
        try pair.pump()
        #expect(try pair.client.submitPing())
        #expect(pair.client.isPingOutstanding)
        #expect(try pair.client.submitPing() == false)
        try pair.pump()
        #expect(!pair.client.isPingOutstanding)
        #expect(pair.clientEvents.contains { if case .pingAcknowledged = $0 { true } else { false } })
    }

    @Test func oldestInFlightSubmitTimeFollowsAnswers() throws {
        let pair = try H2TestPair()
        try pair.pump()
        for tag: UInt64 in 1...3 { try pair.submit(tag: tag) }
        try pair.pump()
        #expect(pair.client.oldestInFlightSubmittedAt() == 1)
        let first = try #require(pair.requests.first)
        try pair.server.respond(streamID: first.streamID, status: 200)
        try pair.pump()
        #expect(pair.client.oldestInFlightSubmittedAt() == 2)
        for request in pair.requests.dropFirst() { try pair.server.respond(streamID: request.streamID, status: 200) }
        try pair.pump()
        #expect(pair.client.oldestInFlightSubmittedAt() == nil)
    }

    @Test func malformedBytesEndTheClientSession() throws {
        let pair = try H2TestPair()
        try pair.pump()
        var failed = false
        do {
            try pair.client.receive([UInt8](repeating: 0xFF, count: 64))
        } catch {
            failed = true
        }
        var output: [UInt8] = []
        try pair.client.drainOutput(into: &output)
        #expect(failed || !pair.client.wantsRead)
        #expect(pair.client.freeStreamSlots == 0 || failed)
    }

    @Test func largeHeaderSetsGrowTheReusableHeaderStorage() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200, headers: [H2Header("x-big", String(repeating: "r", count: 3000))]) }
        try pair.pump()
        let bigValue = String(repeating: "v", count: 5000)
        try pair.client.submit(path: "/3/device/" + String(repeating: "a", count: 2000),
                               headers: [H2Header("authorization", bigValue), H2Header("apns-topic", "t")],
                               body: [], tag: 1)
        try pair.pump()
        #expect(pair.requests.first?.values(of: "authorization") == [bigValue])
        #expect(pair.responses.map(\.status) == [200])
    }
}
