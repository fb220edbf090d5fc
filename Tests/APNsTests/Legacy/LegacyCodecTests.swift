import APNs
import Testing

@Suite struct LegacyCodecTests {
    static let hexToken = String(repeating: "0a1B", count: 16)

    @Test func notificationFrameCarriesEveryItemBigEndian() {
        var out: [UInt8] = []
        LegacyNotificationFrame.append(hexToken: Array(Self.hexToken.utf8)[...], payload: Array("{}".utf8)[...],
                                       identifier: 0x0102_0304, expiration: 0x0A0B_0C0D, priority: 5, to: &out)
        // command, length, then token (3+32), payload (3+2), identifier (3+4), expiration (3+4), priority (3+1)
        #expect(out[0] == 2)
        #expect(Array(out[1..<5]) == [0, 0, 0, 58])
        #expect(Array(out[5..<8]) == [1, 0, 32])
        #expect(Array(out[8..<12]) == [0x0a, 0x1b, 0x0a, 0x1b])
        #expect(Array(out[40..<45]) == [2, 0, 2, UInt8(ascii: "{"), UInt8(ascii: "}")])
        #expect(Array(out[45..<52]) == [3, 0, 4, 1, 2, 3, 4])
        #expect(Array(out[52..<59]) == [4, 0, 4, 0x0A, 0x0B, 0x0C, 0x0D])
        #expect(Array(out[59..<63]) == [5, 0, 1, 5])
        #expect(out.count == 63)
    }

    @Test func encodedFrameParsesBackToTheSameFields() {
        var out: [UInt8] = []
        LegacyNotificationFrame.append(hexToken: Array(Self.hexToken.utf8)[...], payload: Array(#"{"a":1}"#.utf8)[...],
                                       identifier: 77, expiration: 9, priority: 10, to: &out)
        out += [2, 0]  // the start of the next frame stays unread
        guard case .frame(let frame, let consumed) = LegacyNotificationFrame.parse(out[...]) else {
            Issue.record("not parsed")
            return
        }
        #expect(consumed == out.count - 2)
        #expect(frame.identifier == 77 && frame.expiration == 9 && frame.priority == 10)
        #expect(frame.deviceToken == Array(repeating: [0x0a, 0x1b], count: 16).flatMap { $0 })
        #expect(frame.payload == Array(#"{"a":1}"#.utf8))
        #expect(frame.refusal == nil)
        #expect(frame.bytes == Array(out.dropLast(2)))
    }

    @Test func partialFrameWaitsAndOtherCommandsAreProtocolErrors() {
        let frame = LegacyNotificationFrame(deviceToken: Array(repeating: 1, count: 32), payload: [0x7b, 0x7d],
                                            identifier: 5).bytes
        for cut in 0..<frame.count { #expect(LegacyNotificationFrame.parse(frame[..<cut]) == .incomplete) }
        #expect(LegacyNotificationFrame.parse([1, 0, 0][...]) == .protocolError(identifier: 0))
        #expect(LegacyNotificationFrame.parse([2, 0, 1, 0, 0][...]) == .protocolError(identifier: 0))
        // An item that runs past its frame.
        #expect(LegacyNotificationFrame.parse([2, 0, 0, 0, 4, 1, 0, 32, 0][...]) == .protocolError(identifier: 0))
    }

    @Test func itemRulesGiveApplesStatuses() {
        let token = [UInt8](repeating: 7, count: 32)
        func status(_ token: [UInt8]?, _ payload: [UInt8]?, priority: UInt8 = 10) -> LegacyStatus? {
            LegacyNotificationFrame(deviceToken: token, payload: payload, identifier: 1, priority: priority).refusal
        }
        #expect(status(nil, [1]) == .missingDeviceToken)
        #expect(status(Array(token.prefix(31)), [1]) == .invalidTokenSize)
        #expect(status(token, nil) == .missingPayload)
        #expect(status(token, Array(repeating: 0x20, count: 2049)) == .invalidPayloadSize)
        #expect(status(token, Array(repeating: 0x20, count: 2048)) == nil)
        #expect(status(token, [1], priority: 7) == .processingError)
    }

    @Test func errorResponseRoundTripsAndStatusesMapToDispositions() {
        let response = LegacyErrorResponse(status: .invalidToken, identifier: 0xDEAD_BEEF)
        #expect(response.bytes == [8, 8, 0xDE, 0xAD, 0xBE, 0xEF])
        #expect(LegacyErrorResponse.parse(response.bytes[...]) == response)
        #expect(LegacyErrorResponse.parse(response.bytes[..<5]) == nil)
        #expect(LegacyErrorResponse.isMalformed([9][...]))
        #expect(LegacyErrorResponse.parse([8, 42, 0, 0, 0, 1][...])?.status == .unknown)
        #expect(LegacyStatus.invalidToken.disposition == .badToken)
        for status in [LegacyStatus.processingError, .shutdown, .unknown] {
            #expect(status.disposition == .retryLater(.connection))
        }
        for status in [LegacyStatus.missingDeviceToken, .invalidTokenSize, .invalidPayloadSize, .protocolError] {
            #expect(status.disposition == .permanent)
        }
    }

    @Test func feedbackTuplesParseAndATruncatedTailIsCounted() {
        var bytes: [UInt8] = []
        let first = FeedbackTuple(time: 1_700_000_000, token: Array(repeating: 0xAB, count: 32))
        let second = FeedbackTuple(time: 1_700_000_100, token: Array(repeating: 0x01, count: 32))
        first.append(to: &bytes)
        second.append(to: &bytes)
        #expect(Array(bytes[0..<6]) == [0x65, 0x53, 0xF1, 0x00, 0, 32])
        let whole = FeedbackTuple.parseAll(bytes)
        #expect(whole.tuples == [first, second] && whole.truncatedBytes == 0)
        let cut = FeedbackTuple.parseAll(Array(bytes.dropLast(5)))
        #expect(cut.tuples == [first] && cut.truncatedBytes == 38 - 5)
        #expect(first.hexToken == String(repeating: "ab", count: 32))
    }
}
