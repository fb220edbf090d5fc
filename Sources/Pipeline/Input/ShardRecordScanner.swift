/// The sharded prescan's fast path: delimits records as `CSVRecordCounter` does (`CSVStateMachine`,
/// the way strict libcsv delimits them, blank lines not counted), and on the way hashes each
/// record's device token field and counts its fields, so that it marks the shard's rows exactly as
/// the reader will place them (``Shard``), at a fraction of a libcsv pass: only the token field is
/// read a byte at a time.
///
/// It leaves the unusual to libcsv by saying `isSuspicious`: whatever the counter finds suspicious,
/// a field over 64 KiB (its row's placement depends on the exact length libcsv sees), a quoted
/// token holding `""`, or a token with blanks inside it. The prescan then makes its libcsv pass.
struct ShardRecordScanner {
    private var stream = CSVStateMachine.Stream(openFieldLimit: CSVParser.maxFieldBytes)
    private var rows: ShardRows

    /// `tokenField`: the device token's place in the header (0-based); `headerFields`: the
    /// header's field count, which a row must have for its token to be read.
    init(shard: Shard, tokenField: Int, headerFields: Int) {
        rows = ShardRows(shardIndex: shard.index, shardCount: UInt64(shard.count), tokenField: tokenField,
                         headerFields: headerFields)
    }

    var isSuspicious: Bool { stream.isRefused || rows.isSuspicious }
    /// The shard's data rows.
    var members: DoneRows { rows.members }

    mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        guard !rows.isSuspicious else { return }
        stream.scan(bytes, &rows)
    }

    /// The end of the text: a last record without its newline counts; an open quote is suspicious.
    mutating func finish() {
        stream.finish(&rows)
    }
}

/// What the shard scanner learns of each record: its field count and its token's hash.
private struct ShardRows: CSVStateMachine.Listener {
    let shardIndex: Int
    let shardCount: UInt64
    let tokenField: Int
    let headerFields: Int
    private(set) var isSuspicious = false
    private(set) var members = DoneRows()
    private var headerSeen = false
    private var row = 0
    private var field = 0
    private var hash = Shard.fnvOffsetBasis
    private var hashed = false
    private var pendingBlanks = false

    init(shardIndex: Int, shardCount: UInt64, tokenField: Int, headerFields: Int) {
        self.shardIndex = shardIndex
        self.shardCount = shardCount
        self.tokenField = tokenField
        self.headerFields = headerFields
    }

    static var readsFieldBytes: Bool { true }

    /// The token field is read a byte at a time, the others skipped.
    mutating func fieldBegins(at index: Int, quoted: Bool) -> Bool { field == tokenField }

    /// A byte of the token field, as `Shard.hash` takes it: blanks around the token dropped.
    mutating func fieldByte(_ byte: UInt8) {
        if CSVStateMachine.isBlank(byte) {
            if hashed { pendingBlanks = true }
            return
        }
        if pendingBlanks { isSuspicious = true }
        hash = (hash ^ UInt64(byte &- 0x41 < 26 ? byte | 0x20 : byte)) &* Shard.fnvPrime
        hashed = true
    }

    /// A `""` in the token: libcsv's pass hashes what it makes of it.
    mutating func escapedQuote() { isSuspicious = true }

    mutating func fieldEnds(_ kind: CSVStateMachine.FieldKind, at index: Int, length: Int, in base: UnsafePointer<UInt8>?) {
        // Quotes and blanks included: a field near the limit is left to libcsv, which knows its length.
        if length > CSVParser.maxFieldBytes { isSuspicious = true }
        field += 1
    }

    mutating func recordEnds() {
        if headerSeen {
            row += 1
            let owner = field == headerFields && hashed ? Int(hash % shardCount) : row % Int(shardCount)
            if owner == shardIndex { members.insert(row) }
        } else {
            headerSeen = true
            if field != headerFields { isSuspicious = true }
        }
        field = 0
        hash = Shard.fnvOffsetBasis
        hashed = false
        pendingBlanks = false
    }
}
