import Testing
import Transport

@Suite struct H2ConnectionEndTests {
    @Test func goawayAnswersStreamsUpToLastStreamIDAndReturnsTheRestUnprocessed() throws {
        let pair = try H2TestPair()
        try pair.pump()
        var streamOfTag: [UInt64: Int32] = [:]
        for tag: UInt64 in 1...6 { streamOfTag[tag] = try pair.submit(tag: tag) }
        try pair.pump()
        #expect(pair.requests.count == 6)

        let lastStreamID = try #require(streamOfTag[3])
        try pair.server.goaway(lastStreamID: lastStreamID, errorCode: 0, debugData: #"{"reason":"Shutdown"}"#)
        try pair.pump()
        for request in pair.requests where request.streamID <= lastStreamID {
            try pair.server.respond(streamID: request.streamID, status: 200)
        }
        try pair.pump()

        let goaways = pair.clientEvents.compactMap { if case .goaway(let goaway) = $0 { goaway } else { nil } }
        #expect(goaways == [H2GoAway(errorCode: 0, lastStreamID: lastStreamID, debugData: #"{"reason":"Shutdown"}"#)])
        #expect(pair.responses.map(\.tag).sorted() == [1, 2, 3])
        #expect(pair.notProcessed.map(\.tag).sorted() == [4, 5, 6])
        #expect(pair.notProcessed.allSatisfy { $0.cause == .aboveGoawayLastStream })
        #expect(!pair.client.acceptsRequests)
        #expect(pair.client.freeStreamSlots == 0)
        #expect(throws: H2Error.notAcceptingRequests) { try pair.submit(tag: 7) }
        #expect(pair.client.isFinished)
        #expect(pair.server.isFinished)
    }

    @Test func requestsNotYetSentWhenGoawayArrivesComeBackUnprocessed() throws {
        let pair = try H2TestPair()
        try pair.pump()
        try pair.server.goaway(lastStreamID: 0, errorCode: 0, debugData: #"{"reason":"IdleTimeout"}"#)
        var serverBytes: [UInt8] = []
        try pair.server.drainOutput(into: &serverBytes)
        for tag: UInt64 in 1...3 { try pair.submit(tag: tag) }
        try pair.client.receive(serverBytes)
        var clientBytes: [UInt8] = []
        try pair.client.drainOutput(into: &clientBytes)
        pair.client.drainEvents { pair.clientEvents.append($0) }

        #expect(pair.notProcessed.map(\.tag).sorted() == [1, 2, 3])
        #expect(pair.notProcessed.allSatisfy { $0.cause == .aboveGoawayLastStream })
        #expect(clientBytes.count < 100, "only WINDOW_UPDATE/SETTINGS ACK-sized frames, no request HEADERS")
        #expect(pair.client.inFlightCount == 0)
    }

    @Test func terminateHandsBackEveryRequestInFlight() throws {
        let pair = try H2TestPair()
        try pair.pump()
        for tag: UInt64 in 1...5 { try pair.submit(tag: tag) }
        try pair.pump()
        for tag: UInt64 in 6...7 { try pair.submit(tag: tag) }
        pair.client.terminate()
        pair.client.drainEvents { pair.clientEvents.append($0) }

        #expect(pair.lost.map(\.tag).sorted() == [1, 2, 3, 4, 5])
        #expect(pair.lost.allSatisfy { $0.cause == .connectionLost })
        #expect(pair.notProcessed.map(\.tag).sorted() == [6, 7])
        #expect(pair.notProcessed.allSatisfy { $0.cause == .neverSent })
        #expect(pair.client.inFlightCount == 0)
        #expect(!pair.client.wantsRead)
        #expect(throws: H2Error.terminated) { try pair.submit(tag: 8) }
        pair.client.terminate()
        #expect(!pair.client.hasEvents)
    }

    @Test func shutdownLetsInFlightRequestsFinish() throws {
        let pair = try H2TestPair()
        try pair.pump()
        for tag: UInt64 in 1...2 { try pair.submit(tag: tag) }
        try pair.client.shutdown()
        try pair.pump()
        #expect(!pair.client.isFinished)
        #expect(throws: H2Error.notAcceptingRequests) { try pair.submit(tag: 3) }
        for request in pair.requests { try pair.server.respond(streamID: request.streamID, status: 200) }
        try pair.pump()
        #expect(pair.responses.map(\.tag).sorted() == [1, 2])
        #expect(pair.client.isFinished)
        #expect(pair.serverEvents.contains { if case .goaway(let goaway) = $0 { goaway.errorCode == 0 } else { false } })
    }

    @Test func tenThousandRequestsOverAHundredStreamsAreEachAnsweredOnce() throws {
        let pair = try H2TestPair(client: .init(authority: "api.push.apple.com", maxStreams: 100))
        pair.answer = { _ in .init(status: 200, headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")]) }
        let total: UInt64 = 10_000
        var next: UInt64 = 0
        try pair.pump()
        pair.clientEvents.removeAll()
        let clock = ContinuousClock()
        let start = clock.now
        while pair.clientEvents.count < Int(total) {
            while next < total, pair.client.freeStreamSlots > 0 {
                try pair.submit(tag: next)
                next += 1
            }
            try pair.pump(maxRounds: 1)
        }
        let elapsed = clock.now - start
        print("H2: \(total) requests in \(elapsed)")

        let tags = pair.responses.map(\.tag)
        #expect(pair.clientEvents.count == Int(total), "only responses, no other event")
        #expect(tags.count == Int(total))
        #expect(Set(tags).count == Int(total))
        #expect(pair.server.maxConcurrentStreamsSeen == 100)
        #expect(pair.server.priorityFramesReceived == 0)
        #expect(pair.client.inFlightCount == 0)
    }

    @Test func aServerThatDoesNotSpeakHTTP2EndsTheSession() throws {
        let server = try H2ServerSession(configuration: .init())
        var failed = false
        do {
            try server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        } catch {
            failed = true
        }
        var output: [UInt8] = []
        try server.drainOutput(into: &output)
        #expect(failed || server.isFinished)
    }
}
