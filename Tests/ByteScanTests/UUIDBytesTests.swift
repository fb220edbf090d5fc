import Testing
import ByteScan

@Suite struct UUIDBytesTests {
    @Test func aUUIDIsReadAndWrittenBackLowercase() throws {
        let id = try #require(UUIDBytes("5E5AC3A4-6c6b-4B7A-9e8b-1D2C3B4A5F6E"))
        #expect(id.description == "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e")
        #expect(id.high == 0x5e5a_c3a4_6c6b_4b7a)
        #expect(id.low == 0x9e8b_1d2c_3b4a_5f6e)
        var bytes: [UInt8] = Array("x".utf8)
        id.append(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e")
        #expect(UUIDBytes(id.description) == id)
    }

    @Test func textThatIsNotAUUIDIsRefused() {
        for junk in ["", "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6", "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e0",
                     "5e5ac3a46c6b-4b7a-9e8b-1d2c3b4a5f6e00", "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6g",
                     "5e5ac3a4_6c6b_4b7a_9e8b_1d2c3b4a5f6e", "\"e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e",
                     "5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6é"] {
            #expect(UUIDBytes(junk) == nil, "\(junk)")
        }
    }

    /// Every byte value at every position: a UUID only with a hex digit (either case) where a digit
    /// goes and a dash where a dash goes, its value the digit's; and its text read back.
    @Test func everyByteAtEveryPositionIsJudgedAsTheSpellingSays() {
        let base = Array("0123abcd-ef45-6789-ABCD-0f1e2d3c4b5a".utf8)
        let dashes: Set<Int> = [8, 13, 18, 23]
        for position in 0..<36 {
            for value in 0...255 {
                var text = base
                text[position] = UInt8(value)
                let parsed = text.withUnsafeBufferPointer { UUIDBytes(text: $0) }
                let isHex = (0x30...0x39).contains(value) || (0x41...0x46).contains(value) || (0x61...0x66).contains(value)
                let valid = dashes.contains(position) ? value == 0x2D : isHex
                #expect((parsed != nil) == valid, "byte \(value) at \(position)")
                if let parsed, !dashes.contains(position) {
                    #expect(parsed.description == String(decoding: text, as: UTF8.self).lowercased())
                }
            }
        }
    }
}
