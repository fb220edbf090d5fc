import Testing
@testable import Pipeline

/// The counter's field skips come in two builds: SSE2 (32 bytes a step, x86-64) and SWAR (16 bytes
/// a step, other machines and x86-64's tail). Both must keep to the one contract the byte-at-a-time
/// state machine relies on, so each is checked here on the same random buffers, whichever this
/// machine uses: everything skipped could not end the field, and a stop before the last 31 bytes is
/// at a byte that could.
@Suite struct CSVRecordCounterSkipTests {
    /// Random bytes with quotes (singly and in runs), commas, line breaks and spaces among letters.
    static func buffer(_ random: inout SplitMix) -> [UInt8] {
        let alphabet = Array("\"\"\"\",\n\r abcdef0123456789{}:-~".utf8) + [0x80, 0xFF, 0x2D, 0x2C, 0x09]
        let length = Int(random.next() % 160)
        let quoteHeavy = random.next() % 2 == 0
        return (0..<length).map { _ in
            let pick = random.next()
            if !quoteHeavy && pick % 8 != 0 { return UInt8(ascii: "a") + UInt8(pick >> 8 % 26) }
            return alphabet[Int(pick >> 16 % UInt64(alphabet.count))]
        }
    }

    /// The quotes from `start` to `end` pair up (`""`, an escaped quote) reading from `start`.
    static func quotesPairUp(_ bytes: [UInt8], from start: Int, to end: Int) -> Bool {
        var index = start
        while index < end {
            if bytes[index] == 0x22 {
                guard index + 1 < end, bytes[index + 1] == 0x22 else { return false }
                index += 2
            } else {
                index += 1
            }
        }
        return true
    }

    @Test func bothQuotedSkipsStopOnlyWhereAQuoteMayEndTheField() {
        var random = SplitMix(seed: 20261126)
        for _ in 0..<20000 {
            let bytes = Self.buffer(&random)
            let start = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                for (name, stop, tail) in [("SIMD", CSVRecordCounter.skipQuoted(base, from: start, count: bytes.count), 31),
                                           ("SWAR", CSVRecordCounter.skipQuotedSWAR(base, from: start, count: bytes.count), 7)] {
                    #expect(stop >= start && stop <= bytes.count, "\(name) \(bytes) from \(start)")
                    #expect(Self.quotesPairUp(bytes, from: start, to: stop), "\(name) skipped a quote: \(bytes) from \(start)")
                    if stop < bytes.count - tail {
                        #expect(bytes[stop] == 0x22, "\(name) stopped at no quote: \(bytes) from \(start)")
                    }
                }
            }
        }
    }

    @Test func bothUnquotedSkipsStopOnlyBeforeAByteBelowTheHyphen() {
        var random = SplitMix(seed: 20261127)
        for _ in 0..<20000 {
            let bytes = Self.buffer(&random)
            let start = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                for (name, stop, tail) in [("SIMD", CSVRecordCounter.skipUnquoted(base, from: start, count: bytes.count), 31),
                                           ("SWAR", CSVRecordCounter.skipUnquotedSWAR(base, from: start, count: bytes.count), 7)] {
                    #expect(stop >= start && stop <= bytes.count, "\(name) \(bytes) from \(start)")
                    #expect(bytes[start..<stop].allSatisfy { $0 >= 0x2D }, "\(name) skipped a delimiter: \(bytes) from \(start)")
                    if stop < bytes.count - tail {
                        #expect(bytes[stop] < 0x2D, "\(name) stopped at no delimiter: \(bytes) from \(start)")
                    }
                }
            }
        }
    }
}
