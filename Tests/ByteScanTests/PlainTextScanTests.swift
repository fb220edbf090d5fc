import Testing
@testable import ByteScan

/// The one plain-text scan (JSON validation of payloads, result lines written without escaping).
@Suite struct PlainTextScanTests {
    /// `isPlainText` eight bytes a step, held to the byte-at-a-time rule: every byte value at every
    /// position of texts up to 24 bytes long (whole words, tails and both). DEL (0x7F) is plain:
    /// JSON needs no escape for it, and the escaping writer passes it through as it is.
    @Test func isPlainTextAgreesWithTheByteRuleForEveryByteAtEveryPosition() {
        func reference(_ bytes: [UInt8]) -> Bool {
            bytes.allSatisfy { $0 >= 0x20 && $0 < 0x80 && $0 != 0x22 && $0 != 0x5C }
        }
        for length in 0...24 {
            let base = [UInt8]((0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            #expect(base.withUnsafeBufferPointer(SWAR.isPlainText) == reference(base))
            for position in 0..<length {
                for value in 0...255 {
                    var text = base
                    text[position] = UInt8(value)
                    #expect(text.withUnsafeBufferPointer(SWAR.isPlainText) == reference(text),
                            "byte \(value) at \(position) of \(length)")
                }
            }
        }
    }

    /// The lowest flag of `plainTextStops` is the first byte that ends plain text, whatever follows.
    @Test func plainTextStopsFlagsTheFirstStoppingByteExactly() {
        for position in 0..<8 {
            for value in 0...255 {
                for after in [UInt8(0x00), 0x22, 0x5C, 0xFF, 0x41] {
                    var bytes = [UInt8](repeating: 0x41, count: 8)
                    bytes[position] = UInt8(value)
                    for later in (position + 1)..<8 { bytes[later] = after }
                    let flags = bytes.withUnsafeBytes { SWAR.plainTextStops(SWAR.load($0.baseAddress!)) }
                    let first = bytes.firstIndex { $0 < 0x20 || $0 >= 0x80 || $0 == 0x22 || $0 == 0x5C }
                    #expect((flags == 0 ? nil : flags.trailingZeroBitCount >> 3) == first,
                            "byte \(value) at \(position), then \(after)")
                }
            }
        }
    }
}
