import ByteScan
import FuzzSupport
@testable import Pipeline

/// The CSV fast path against libcsv, the reference: `CSVParser` with its `CSVFastSplitter` and
/// `CSVParser` with libcsv alone get the same bytes in the same chunks and must tell their callers
/// exactly the same (`CSVParseTranscript`: every batch's rows, fields and problems, the header, the
/// error and its line, the lines reached, the prescan's first row missing its topic). And the
/// splitter with the portable block tests (`SWARBlocks`, other machines' path) splits each record
/// exactly as with the native ones. Besides that, nothing may crash or trip ASan.
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
    checkPortableSplits(text)
    return 0
}

/// Splits `text` record by record with both kinds of blocks (a record either leaves to libcsv goes
/// on after its line's end): the same ends, and the same bytes in each field.
func checkPortableSplits(_ text: [UInt8]) {
    let native = CSVFastSplitter()
    let portable = CSVFastSplitter()
    text.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        var position = 0
        while true {
            position = CSVStateMachine.skipBetweenRecords(base.assumingMemoryBound(to: UInt8.self), from: position, count: raw.count)
            guard position < raw.count else { return }
            let nativeEnd = native.split(base, from: position, count: raw.count, using: NativeBlocks.self)
            let portableEnd = portable.split(base, from: position, count: raw.count, using: SWARBlocks.self)
            fuzzCheck(nativeEnd == portableEnd, "record at \(position): native end \(String(describing: nativeEnd)), SWAR \(String(describing: portableEnd))")
            guard let next = nativeEnd else {
                guard let line = text[position...].firstIndex(of: 0x0A) else { return }
                position = line + 1
                continue
            }
            func fields(_ splitter: CSVFastSplitter) -> [[UInt8]] {
                (0..<splitter.fieldCount).map { index in
                    let (start, count) = splitter.bytes(of: splitter.spans[index], in: base)
                    return Array(UnsafeRawBufferPointer(start: start, count: count))
                }
            }
            fuzzCheck(fields(native) == fields(portable), "record at \(position): the fields differ with SWAR blocks")
            position = next
        }
    }
}
