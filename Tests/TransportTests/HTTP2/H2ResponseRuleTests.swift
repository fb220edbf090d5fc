import Testing
import Transport

/// The client session checks an answer's HTTP rules itself (nghttp2's own checks are off for
/// speed): an answer that breaks them is a stream error, reported as `.lost`, never as a response.
@Suite struct H2ResponseRuleTests {
    private static let protocolError: UInt32 = 1

    private func outcome(of answer: H2TestPair.Answer) throws -> H2TestPair {
        let pair = try H2TestPair()
        pair.answer = { _ in answer }
        try pair.pump()
        try pair.submit(tag: 7)
        try pair.pump()
        return pair
    }

    @Test(arguments: [99, 1000, 101, 103])
    func anAnswerWithoutAThreeDigitFinalStatusIsLost(status: Int) throws {
        let pair = try outcome(of: .init(status: status))
        #expect(pair.responses.isEmpty)
        #expect(pair.lost.map(\.tag) == [7])
        #expect(pair.lost.first?.cause == .streamReset(errorCode: Self.protocolError))
    }

    @Test func aSecondStatusFieldMakesTheAnswerLost() throws {
        let pair = try outcome(of: .init(status: 200, headers: [H2Header(":status", "410")]))
        #expect(pair.responses.isEmpty)
        #expect(pair.lost.map(\.tag) == [7])
    }

    @Test(arguments: ["abc", "", "-1", "5 "])
    func aContentLengthThatIsNotANumberMakesTheAnswerLost(value: String) throws {
        let pair = try outcome(of: .init(status: 200, headers: [H2Header("content-length", value)]))
        #expect(pair.responses.isEmpty)
        #expect(pair.lost.map(\.tag) == [7])
    }

    @Test func aBodyLongerThanItsContentLengthMakesTheAnswerLost() throws {
        let pair = try outcome(of: .init(status: 400, headers: [H2Header("content-length", "3")],
                                         body: Array(#"{"reason":"BadDeviceToken"}"#.utf8)))
        #expect(pair.responses.isEmpty)
        #expect(pair.lost.map(\.tag) == [7])
    }

    @Test func anAnswerWhoseContentLengthMatchesItsBodyIsAResponse() throws {
        let body = Array(#"{"reason":"BadDeviceToken"}"#.utf8)
        let pair = try outcome(of: .init(status: 400, headers: [H2Header("content-length", String(body.count)),
                                                                H2Header("apns-id", "6a7b7c3e-0000-4000-8000-000000000001")],
                                         body: body))
        #expect(pair.lost.isEmpty)
        #expect(pair.responses.map(\.status) == [400])
        #expect(pair.responses.first?.body == body)
        #expect(pair.responses.first?.apnsID == "6a7b7c3e-0000-4000-8000-000000000001")
    }
}
