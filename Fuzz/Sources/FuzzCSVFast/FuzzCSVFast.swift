import FuzzSupport
@testable import Pipeline

/// The CSV fast path against libcsv, the reference: `CSVParser` with its `CSVFastSplitter` and
/// `CSVParser` with libcsv alone get the same bytes in the same chunks and must tell their callers
/// exactly the same (`CSVParseTranscript`: every batch's rows, fields and problems, the header, the
/// error and its line, the lines reached, the prescan's first row missing its topic). Besides
/// that, neither may crash or trip ASan.
///
/// Input: a selector byte (bit 0: the prescan's counting parser, requiring a topic, instead of the
/// reader's; bit 1: a payload template's extra column `x`; bits 2–7: the chunk size, or 0 for chunks
/// cut after each of the gaps given by the next byte's count (0–7) of bytes that follow), then the file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSVFast(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let selector = input.byte()
    let counting = selector & 1 != 0
    let extraColumns = selector & 2 != 0 ? ["x"] : []
    let chunk = Int(selector >> 2)
    var gaps: [Int] = []
    if chunk == 0 {
        gaps = input.take(Int(input.byte() % 8)).map(Int.init)
    }
    let text = Array(input.rest())
    var cuts: [Int] = []
    if chunk > 0 {
        cuts = Array(stride(from: chunk, to: text.count, by: chunk))
    } else {
        var at = 0
        for gap in gaps {
            at = min(text.count, at + gap)
            cuts.append(at)
        }
    }
    func transcript(fastPath: Bool) -> CSVParseTranscript {
        CSVParseTranscript(text, cuts: cuts, fastPath: fastPath, keepsFields: !counting, extraColumns: extraColumns,
                           requiredColumn: counting ? .topic : nil)
    }
    let fast = transcript(fastPath: true)
    let libcsv = transcript(fastPath: false)
    fuzzCheck(fast == libcsv, "the fast path and libcsv differ: \(CSVParseTranscript.difference(text, cuts: cuts, fast: fast, libcsv: libcsv))")
    return 0
}
