/// Counts the records of CSV text the way `CSVParser` (libcsv, strict) delimits them — blank lines
/// not counted — without copying a field, and notices anything strict libcsv would refuse (a quote
/// inside an unquoted field, text after a closing quote, a NUL byte, an unclosed quote, a field over
/// `CSVParser.hardFieldLimit` bytes) without saying what: the prescan then asks libcsv itself for
/// the exact error and line. The prescan's fast path: `CSVStateMachine` over every byte of a
/// campaign, telling the duplicate scan, when there is one, where each field lies.
struct CSVRecordCounter {
    private var stream = CSVStateMachine.Stream(openFieldLimit: CSVParser.hardFieldLimit)
    /// Records with at least one field, the header included.
    private(set) var records = 0
    /// Told where each token and topic field lies, when the run looks for duplicate tokens.
    var duplicates: DuplicateTokensScan?

    /// `startsAfterHeader`: the text starts at a record after the header (the second half of a
    /// file, `PrescanHalves`): `records` then counts the header as seen, and its first record is data.
    init(startsAfterHeader: Bool = false) {
        records = startsAfterHeader ? 1 : 0
    }

    /// Something strict libcsv would refuse lies in the text so far.
    var isSuspicious: Bool { stream.isRefused }

    /// Whether the text so far ends between records (a line break outside quotes, or nothing yet).
    var isBetweenRecords: Bool { stream.isBetweenRecords }

    mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        var counting = Counting(records: records, duplicates: duplicates.map { Unmanaged.passUnretained($0) })
        stream.scan(bytes, &counting)
        records = counting.records
    }

    /// The end of the text: a last record without its newline counts; an open quote is suspicious.
    mutating func finish() {
        var counting = Counting(records: records, duplicates: duplicates.map { Unmanaged.passUnretained($0) })
        stream.finish(&counting)
        records = counting.records
    }

    /// The counter's listener, made for each chunk: the scan held unretained (the counter keeps it
    /// alive), so that telling it costs no retain and release.
    private struct Counting: CSVStateMachine.Listener {
        var records: Int
        let duplicates: Unmanaged<DuplicateTokensScan>?

        @inline(__always)
        mutating func fieldBegins(at index: Int, quoted: Bool) -> Bool {
            duplicates?._withUnsafeGuaranteedRef { $0.fieldBegins(at: quoted ? index &+ 1 : index) }
            return false
        }

        @inline(__always)
        mutating func fieldEnds(_ kind: CSVStateMachine.FieldKind, at index: Int, length: Int, in base: UnsafePointer<UInt8>?) {
            guard let duplicates else { return }
            duplicates._withUnsafeGuaranteedRef { scan in
                switch kind {
                case .empty: break
                case .unquoted: if let base { scan.unquotedEnds(at: index, base) } else { scan.unquotedEndsAtInputEnd() }
                case .quoted: if let base { scan.quotedEnds(at: index, base) } else { scan.quotedEndsAtInputEnd() }
                }
                scan.nextField()
            }
        }

        @inline(__always)
        mutating func recordEnds() {
            records &+= 1
            let isHeader = records == 1
            duplicates?._withUnsafeGuaranteedRef { $0.rowEnds(isHeader: isHeader) }
        }

        @inline(__always)
        mutating func chunkEnds(count: Int, in base: UnsafePointer<UInt8>, inField: Bool) {
            duplicates?._withUnsafeGuaranteedRef { $0.chunkEnds(count: count, base, inField: inField) }
        }
    }
}
