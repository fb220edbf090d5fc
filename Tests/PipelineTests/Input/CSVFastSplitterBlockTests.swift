import ByteScan
import APNs
import Testing
import TestSupport
@testable import Pipeline

/// The splitter tests 16 bytes a step (`ByteBlocks`): delimiters and quotes at the edges of a block,
/// fields that end with one, and chunk tails shorter than one still give libcsv's rows, fields and
/// errors; and the portable blocks (`SWARBlocks`, other machines' path) split every record exactly
/// as the native ones do.
extension CSVFastPathTests {
    /// Fields of lengths around one, two and three blocks, quoted or not, ended by each delimiter
    /// (or by a byte libcsv refuses), in a text whole and cut a few bytes either side of the end.
    @Test func delimitersAroundBlockEdgesAreLibcsvs() {
        let ends = [",", "\n", "\r\n", "\r", "\"", " ,", "\t\n", "x\"", " x,"]
        for length in [0, 1, 7, 8, 9, 14, 15, 16, 17, 18, 31, 32, 33, 47, 48, 49, 64] {
            let plain = String(repeating: "a", count: length)
            for end in ends {
                for field in [plain, "\"\(plain)\"", "\"\(plain)\"\"\"", " \(plain)"] {
                    let record = "t," + field + end + "c,d\n"
                    let text = Array((Self.header + record + "t2,p,c,d\n").utf8)
                    let fieldEnd = Self.header.utf8.count + 2 + field.utf8.count
                    expectSame(text, cuts: [])
                    for cut in fieldEnd - 3...fieldEnd + 3 { expectSame(text, cuts: [cut]) }
                }
            }
        }
    }

    /// A `""` with each of its quotes on either side of a block's edge, or both at its end.
    @Test func escapedQuotesAcrossBlockEdgesAreLibcsvs() {
        for offset in 12..<52 {
            for tail in ["b\",c,d\n", "\",c,d\n", "\"\n"] {
                let text = Array((Self.header + "t1,\"" + String(repeating: "p", count: offset) + "\"\"" + tail
                    + "t2,y,z,w\n").utf8)
                expectSame(text, cuts: [])
                expectSame(text, cuts: [Self.header.utf8.count + 4 + offset])
            }
        }
    }

    /// Splits every record of `text` that the native blocks split, with both kinds of blocks:
    /// the same end, fields and bytes, and the same records left to libcsv.
    func expectPortableSplitsAsNative(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let native = CSVFastSplitter()
        let portable = CSVFastSplitter()
        text.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            let bytes = base.assumingMemoryBound(to: UInt8.self)
            var position = 0
            while true {
                position = CSVStateMachine.skipBetweenRecords(bytes, from: position, count: raw.count)
                guard position < raw.count else { return }
                let nativeEnd = native.split(base, from: position, count: raw.count, using: NativeBlocks.self)
                let portableEnd = portable.split(base, from: position, count: raw.count, using: SWARBlocks.self)
                #expect(nativeEnd == portableEnd, "record at \(position) of \(text)", sourceLocation: sourceLocation)
                guard let next = nativeEnd, nativeEnd == portableEnd else {
                    // Left to libcsv: go on after the line's end, as the parser would after it.
                    guard let line = text[position...].firstIndex(of: 0x0A) else { return }
                    position = line + 1
                    continue
                }
                let fields = { (splitter: CSVFastSplitter) in
                    (0..<splitter.fieldCount).map { index in
                        let (start, count) = splitter.bytes(of: splitter.spans[index], in: base)
                        return Array(UnsafeRawBufferPointer(start: start, count: count))
                    }
                }
                #expect(fields(native) == fields(portable), "record at \(position) of \(text)",
                        sourceLocation: sourceLocation)
                position = next
            }
        }
    }

    @Test func portableBlocksSplitRecordsAsTheNativeOnes() {
        var random = SeededRandom(seed: 20261128)
        for _ in 0..<3000 {
            expectPortableSplitsAsNative(recordsText(&random))
            expectPortableSplitsAsNative(nastyText(&random))
        }
        for edge in Self.edgeCases { expectPortableSplitsAsNative(Array((Self.header + edge).utf8)) }
    }
}
