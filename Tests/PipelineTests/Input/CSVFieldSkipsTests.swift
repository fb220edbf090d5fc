import ByteScan
import Testing
import TestSupport
@testable import Pipeline

/// The state machine's field skips come in two builds: SSE2 (32 bytes a step, x86-64) and SWAR (16 bytes
/// a step, other machines and x86-64's tail). Both must keep to the one contract the byte-at-a-time
/// state machine relies on, so each is checked here on the same random buffers, whichever this
/// machine uses: everything skipped could not end the field, and a stop before the last 31 bytes is
/// at a byte that could.
@Suite struct CSVFieldSkipsTests {
    /// Random bytes with quotes (singly and in runs), commas, line breaks and spaces among letters.
    static func buffer(_ random: inout SeededRandom) -> [UInt8] {
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

    typealias Skip = (UnsafeRawPointer, Int, Int) -> Int

    /// Each build's skip on 20,000 random buffers from random starts: it stays within the buffer,
    /// everything it skips passes `skippable` (from the start to the stop), and a stop before the
    /// build's last few bytes (31 for SSE2, 7 for SWAR) is at a byte that `stops` accepts.
    static func check(seed: UInt64, _ builds: [(name: String, skip: Skip, tail: Int)],
                      skippable: ([UInt8], Int, Int) -> Bool, stops: (UInt8) -> Bool) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<20000 {
            let bytes = buffer(&random)
            let start = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            bytes.withUnsafeBytes { raw in
                let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                for (name, skip, tail) in builds {
                    let stop = skip(base, start, bytes.count)
                    #expect(stop >= start && stop <= bytes.count, "\(name) \(bytes) from \(start)")
                    guard stop >= start && stop <= bytes.count else { continue }
                    #expect(skippable(bytes, start, stop), "\(name) skipped a byte that may end the field: \(bytes) from \(start)")
                    if stop < bytes.count - tail {
                        #expect(stops(bytes[stop]), "\(name) stopped at a byte that cannot end the field: \(bytes) from \(start)")
                    }
                }
            }
        }
    }

    @Test func bothQuotedSkipsStopOnlyWhereAQuoteMayEndTheField() {
        Self.check(seed: 20261126, [("SIMD", CSVStateMachine.skipQuoted, 31), ("SWAR", CSVStateMachine.skipQuotedSWAR, 7)],
                   skippable: Self.quotesPairUp, stops: { $0 == 0x22 })
    }

    @Test func bothUnquotedSkipsStopOnlyBeforeAByteBelowTheHyphen() {
        Self.check(seed: 20261127, [("SIMD", CSVStateMachine.skipUnquoted, 31), ("SWAR", CSVStateMachine.skipUnquotedSWAR, 7)],
                   skippable: { bytes, start, stop in bytes[start..<stop].allSatisfy { $0 >= 0x2D } }, stops: { $0 < 0x2D })
    }
}
