@testable import Pipeline

/// `CSVRecordCounter` without its block skips: `CSVStateMachine` stepped on every byte of every
/// field. The reference the skipping counter must agree with at every chunk (libcsv is the
/// reference for the grammar itself).
struct ByteAtATimeRecordCounter {
    private var stream = CSVStateMachine.Stream(openFieldLimit: CSVParser.hardFieldLimit)
    private var counting = Counting()

    var records: Int { counting.records }
    var isSuspicious: Bool { stream.isRefused }

    mutating func scan(_ bytes: UnsafeRawBufferPointer) { stream.scan(bytes, &counting) }
    mutating func finish() { stream.finish(&counting) }

    private struct Counting: CSVStateMachine.Listener {
        var records = 0
        static var readsFieldBytes: Bool { true }
        mutating func fieldBegins(at index: Int, quoted: Bool) -> Bool { true }
        mutating func fieldEnds(_ kind: CSVStateMachine.FieldKind, at index: Int, length: Int, in base: UnsafePointer<UInt8>?) {}
        mutating func recordEnds() { records += 1 }
    }
}
