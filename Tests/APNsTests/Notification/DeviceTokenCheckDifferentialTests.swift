import ByteScan
@testable import APNs
import Testing
import TestSupport

/// `DeviceToken.check` tests 16 bytes at a time (8 below that); it must say exactly what a
/// byte-by-byte check says: the first byte that is not a hex digit, else empty, odd length or too
/// long. Its SWAR path (`SWARBlocks`, other machines' and the one the tests compare) too.
@Suite struct DeviceTokenCheckDifferentialTests {
    /// The check as it reads in words: one byte at a time.
    private func byteByByte(_ text: ArraySlice<UInt8>) -> DeviceTokenError? {
        if let bad = text.firstIndex(where: { !Self.isHexDigit[Int($0)] }) {
            return .notHex(offset: bad - text.startIndex)
        }
        if text.isEmpty { return .empty }
        if text.count % 2 != 0 { return .oddLength(hexDigits: text.count) }
        if text.count / 2 > 100 { return .tooLong(bytes: text.count / 2) }
        return nil
    }

    /// The check with the portable blocks, which must agree with the native ones.
    private func portable(_ text: ArraySlice<UInt8>) -> DeviceTokenError? {
        text.withUnsafeBufferPointer { DeviceToken.check(utf8: $0, using: SWARBlocks.self) }
    }

    private static let isHexDigit = (0...255).map { "0123456789abcdefABCDEF".utf8.contains(UInt8($0)) }

    private func digits(_ count: Int, _ random: inout SeededRandom) -> [UInt8] {
        let hexDigits = Array("0123456789abcdefABCDEF".utf8)
        return (0..<count).map { _ in hexDigits[Int(random.next() % UInt64(hexDigits.count))] }
    }

    /// Lengths below, at and around one word and one block, the overlapping last word or block,
    /// two and three blocks, a 32-byte token, the limit.
    static let lengths = Array(1...25) + [31, 32, 33, 47, 48, 49, 63, 64, 65, 66, 200, 201, 202]

    @Test(arguments: lengths)
    func everyByteValueAtEveryOffsetIsJudgedAsByteByByte(length: Int) {
        var random = SeededRandom(seed: UInt64(length))
        let valid = digits(length, &random)
        var disagreements: [String] = []
        for offset in 0..<length {
            for value in UInt8.min...UInt8.max {
                var text = valid
                text[offset] = value
                let verdict = DeviceToken.check(hexUTF8: text[...])
                if verdict != byteByByte(text[...]) { disagreements.append("\(value) at \(offset): \(String(describing: verdict))") }
                if portable(text[...]) != verdict { disagreements.append("SWAR: \(value) at \(offset)") }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }

    @Test func aBadByteIsReportedAtItsOffsetEvenWithAnotherAfterIt() {
        var text = Array(DeviceTokenTests.token32.utf8)
        text[13] = UInt8(ascii: "g")
        text[14] = UInt8(ascii: " ")
        text[63] = 0xFF
        #expect(DeviceToken.check(hexUTF8: text[...]) == .notHex(offset: 13))
    }

    @Test func randomTextsInsideLargerBuffersAreJudgedAsByteByByte() {
        var random = SeededRandom(seed: 20_260_301)
        // Bytes next to the edges of the digit and letter ranges, and with the top bit set.
        let nearMisses: [UInt8] = [0x00, 0x2F, 0x3A, 0x40, 0x47, 0x60, 0x67, 0x7F, 0x80, 0xB0, 0xB9, 0xC1, 0xE6, 0xFF]
        var refused = 0
        var disagreements: [String] = []
        for _ in 0..<50_000 {
            var buffer = digits(Int(random.next() % 240), &random)
            for _ in 0..<(Int(random.next() % 3)) where !buffer.isEmpty {
                let at = Int(random.next() % UInt64(buffer.count))
                buffer[at] = random.next() % 2 == 0
                    ? nearMisses[Int(random.next() % UInt64(nearMisses.count))] : UInt8(truncatingIfNeeded: random.next())
            }
            let start = buffer.isEmpty ? 0 : Int(random.next() % UInt64(buffer.count))
            let end = start + Int(random.next() % UInt64(buffer.count - start + 1))
            let text = buffer[start..<end]
            let verdict = DeviceToken.check(hexUTF8: text)
            if case .notHex = verdict { refused += 1 }
            if verdict != byteByByte(text) { disagreements.append("\(Array(text)): \(String(describing: verdict))") }
            if portable(text) != verdict { disagreements.append("SWAR: \(Array(text))") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
        #expect(refused > 5_000 && refused < 45_000)
    }
}
