import ByteScan
import Testing

@Suite struct InlineTextTests {
    @Test func inlineTextKeepsShortValuesInlineAndLongOnesWhole() {
        let id = InlineText("5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e")
        #expect(id.description == "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e")
        #expect(id.count == 36)
        #expect(id == InlineText("5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e"))
        #expect(id != InlineText("5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6f"))
        let text = String(repeating: "z", count: 100)
        let long = InlineText(text)
        #expect(long.count == 100 && long.description == text)
        var out: [UInt8] = []
        long.append(to: &out)
        #expect(out == Array(text.utf8))
        #expect(long == InlineText(text))
        #expect(long != id)
        #expect(InlineText().isEmpty)
    }
}
