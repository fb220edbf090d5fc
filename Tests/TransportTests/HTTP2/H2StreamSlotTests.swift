import Testing
import Transport

@Suite struct H2StreamSlotTests {
    @Test func oneSlotUntilTheServersSettingsThenTheSmallerOfBothLimits() throws {
        let pair = try H2TestPair(client: .init(authority: "a", maxStreams: 100),
                                  server: .init(maxConcurrentStreams: 1000))
        #expect(pair.client.freeStreamSlots == 1)
        try pair.pump()
        #expect(pair.client.serverMaxConcurrentStreams == 1000)
        #expect(pair.client.freeStreamSlots == 100)
        #expect(pair.clientEvents.contains { if case .maxConcurrentStreamsChanged(1000) = $0 { true } else { false } })

        let smallCap = try H2TestPair(client: .init(authority: "a", maxStreams: 5000),
                                      server: .init(maxConcurrentStreams: 1000))
        try smallCap.pump()
        #expect(smallCap.client.freeStreamSlots == 1000)
    }

    @Test func slotsFollowTheServerLoweringAndRaisingItsLimit() throws {
        let pair = try H2TestPair(client: .init(authority: "a", maxStreams: 100),
                                  server: .init(maxConcurrentStreams: 1000))
        try pair.pump()
        for tag: UInt64 in 1...3 { try pair.submit(tag: tag) }
        #expect(pair.client.freeStreamSlots == 97)
        try pair.pump()

        try pair.server.updateMaxConcurrentStreams(1)
        try pair.pump()
        #expect(pair.client.serverMaxConcurrentStreams == 1)
        #expect(pair.client.freeStreamSlots == 0)
        #expect(throws: H2Error.noFreeStreamSlot) { try pair.submit(tag: 4) }

        for request in pair.requests { try pair.server.respond(streamID: request.streamID, status: 200) }
        try pair.pump()
        #expect(pair.client.freeStreamSlots == 1)

        try pair.server.updateMaxConcurrentStreams(50)
        try pair.pump()
        #expect(pair.client.freeStreamSlots == 50)
    }

    @Test func tokenAuthKeepsOneSlotUntilAResponseOtherThan403() throws {
        let pair = try H2TestPair(client: .init(authority: "a", maxStreams: 100, singleStreamUntilAuthorized: true),
                                  server: .init(maxConcurrentStreams: 1000))
        var statuses = [403, 403, 410]
        pair.answer = { _ in .init(status: statuses.removeFirst()) }
        try pair.pump()
        #expect(pair.client.freeStreamSlots == 1)
        try pair.submit(tag: 1)
        #expect(pair.client.freeStreamSlots == 0)
        try pair.pump()
        #expect(pair.client.freeStreamSlots == 1)
        try pair.submit(tag: 2)
        try pair.pump()
        #expect(!pair.client.isAuthorized)
        #expect(pair.client.freeStreamSlots == 1)
        try pair.submit(tag: 3)
        try pair.pump()
        #expect(pair.client.isAuthorized)
        #expect(pair.client.freeStreamSlots == 100)
        #expect(pair.responses.map(\.status) == [403, 403, 410])
    }

    @Test func refusedStreamsComeBackAsNotProcessed() throws {
        let pair = try H2TestPair()
        pair.server.admitsStream = { streamID in streamID != 3 }
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        for tag: UInt64 in 1...3 { try pair.submit(tag: tag) }
        try pair.pump()
        #expect(pair.responses.map(\.tag).sorted() == [1, 3])
        #expect(pair.notProcessed.map(\.tag) == [2])
        #expect(pair.notProcessed.map(\.cause) == [.refusedStream])
        #expect(pair.client.inFlightCount == 0)
    }

    @Test func aStreamRefusedAfterItsRequestArrivedIsNotProcessed() throws {
        let pair = try H2TestPair()
        try pair.pump()
        let streamID = try pair.submit(tag: 9)
        try pair.pump()
        try pair.server.refuse(streamID: streamID)
        try pair.pump()
        #expect(pair.notProcessed.map(\.tag) == [9])
        #expect(try pair.server.respond(streamID: streamID, status: 200) == false)
    }

    @Test func otherResetsAreReportedAsLost() throws {
        let pair = try H2TestPair()
        pair.answer = { _ in .init(status: 200, headers: [H2Header("content-length", "5")]) }
        try pair.pump()
        try pair.submit(tag: 4)
        try pair.pump()
        // A response whose content-length lies is a stream error (the session's own check, H2ResponseChecks).
        #expect(pair.lost.map(\.tag) == [4])
        #expect(pair.responses.isEmpty)
    }

    @Test func streamsOverALoweredLimitBeforeTheClientAcknowledgesAreRefused() throws {
        let pair = try H2TestPair(client: .init(authority: "a", maxStreams: 100),
                                  server: .init(maxConcurrentStreams: 1000))
        pair.answer = { _ in .init(status: 200) }
        try pair.pump()
        try pair.server.updateMaxConcurrentStreams(1)
        var settings: [UInt8] = []
        try pair.server.drainOutput(into: &settings)
        // The client submits five before it sees the new limit.
        for tag: UInt64 in 1...5 { try pair.submit(tag: tag) }
        var requests: [UInt8] = []
        try pair.client.drainOutput(into: &requests)
        try pair.server.receive(requests)
        try pair.client.receive(settings)
        try pair.pump()

        #expect(pair.responses.count + pair.notProcessed.count == 5)
        #expect(pair.responses.count >= 1)
        #expect(pair.notProcessed.count >= 1)
        #expect(pair.notProcessed.allSatisfy { $0.cause == .refusedStream })
        #expect(pair.client.freeStreamSlots == 1)
    }

    @Test func aServerThatAnnouncesNoLimitLeavesTheLocalCap() throws {
        let client = try H2ClientSession(configuration: .init(authority: "a", maxStreams: 300))
        let emptySettingsFrame: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]
        try client.receive(emptySettingsFrame)
        #expect(client.serverMaxConcurrentStreams == Int(UInt32.max))
        #expect(client.freeStreamSlots == 300)
    }
}
