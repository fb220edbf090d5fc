/// The prescan's half of duplicate detection. `CSVRecordCounter` tells it where the token and
/// topic fields of each row begin and end in the chunk it scans; at each data row's end their
/// key's hash goes into a Bloom filter, and a hash the filter has (probably) seen is a suspect.
/// The suspects, a small sorted array, are all the reader needs: a row whose hash is not one is
/// no duplicate and pays one table look-up; only the rows that are go into an exact check.
///
/// The captured bytes are what libcsv gives the reader: spaces and tabs around an unquoted field
/// trimmed, a quoted field's content exactly with `""` made `"`. Used by the prescan's thread.
final class DuplicateTokensScan {
    /// A field this long (only an absurd one) makes the scan give up: the reader then uses its
    /// stream mode (`DuplicateTokens.hashes`), exact up to 64-bit hash collisions.
    static let captureLimit = 4096

    let tokenField: Int
    let topicField: Int
    private let defaultTopicHash: UInt64
    private var bloom: DuplicateBloom?
    private(set) var suspects: [UInt64] = []
    /// Set when the scan could not finish (a field over `captureLimit`): no suspects then.
    private(set) var incomplete = false

    private var field = 0
    /// The field being captured: 0 none, 1 the token, 2 the topic.
    private var capturing = 0
    private var captureStart = 0
    private var token: [UInt8] = []
    private var topic: [UInt8] = []

    /// - Parameters:
    ///   - header: the input's header (which fields hold the token and the topic).
    ///   - defaultTopic: `--topic`, the key's topic for a row with an empty one.
    ///   - bloomBytes: the filter's size (a test makes it tiny, so that nearly every row is a suspect).
    init(header: CSVHeader, defaultTopic: String?, bloomBytes: Int) {
        tokenField = header.fieldIndex(.deviceToken) ?? -1
        topicField = header.fieldIndex(.topic) ?? -1
        var topic = Array((defaultTopic ?? "").utf8)
        defaultTopicHash = topic.withUnsafeMutableBytes { DuplicateKeyHash.topic(UnsafeRawBufferPointer($0)) }
        bloom = DuplicateBloom(bytes: bloomBytes)
        token.reserveCapacity(256)
        self.topic.reserveCapacity(256)
    }

    /// A field begins at `index` of the chunk (after a quoted field's opening quote).
    @inline(__always)
    func fieldBegins(at index: Int) {
        guard field == tokenField || field == topicField else { return }
        captureStart = index
        capturing = field == tokenField ? 1 : 2
    }

    /// The unquoted field being captured ends before `index`: its trailing spaces and tabs go.
    @inline(__always)
    func unquotedEnds(at index: Int, _ base: UnsafePointer<UInt8>) {
        guard capturing != 0 else { return }
        take(base, upTo: index)
        if capturing == 1 { Self.trimEnd(&token) } else if capturing == 2 { Self.trimEnd(&topic) }
        capturing = 0
    }

    /// The input ends inside the unquoted field being captured (its bytes taken at the chunk's end).
    func unquotedEndsAtInputEnd() {
        if capturing == 1 { Self.trimEnd(&token) } else if capturing == 2 { Self.trimEnd(&topic) }
        capturing = 0
    }

    /// The quoted field being captured ends before `index` (a comma or line end after its closing
    /// quote). What was taken is its text as written, the closing quote and any spaces after it:
    /// those go, and `""` becomes `"` (the counter skips a `""` inside a word without a stop, so
    /// the unescaping is done here, over the whole field, once).
    @inline(__always)
    func quotedEnds(at index: Int, _ base: UnsafePointer<UInt8>) {
        guard capturing != 0 else { return }
        take(base, upTo: index)
        quotedEndsAtInputEnd()
    }

    /// The input ends after the quoted field being captured (its bytes taken at the chunk's end).
    func quotedEndsAtInputEnd() {
        if capturing == 1 { Self.unquote(&token) } else if capturing == 2 { Self.unquote(&topic) }
        capturing = 0
    }

    @inline(__always)
    func nextField() { field += 1 }

    /// The chunk ends inside the field being captured: its bytes so far are taken.
    func chunkEnds(count: Int, _ base: UnsafePointer<UInt8>, inField: Bool) {
        guard capturing != 0 else { return }
        if inField { take(base, upTo: count) }
        captureStart = 0
    }

    /// A record ended; the first is the header.
    func rowEnds(isHeader: Bool) {
        defer {
            field = 0
            capturing = 0
            token.removeAll(keepingCapacity: true)
            topic.removeAll(keepingCapacity: true)
        }
        guard !isHeader, !incomplete, let bloom else { return }
        let tokenHash = token.withUnsafeBytes { DuplicateKeyHash.token($0) }
        let topicHash = topic.isEmpty ? defaultTopicHash : topic.withUnsafeBytes { DuplicateKeyHash.topic($0) }
        let hash = DuplicateKeyHash.combine(token: tokenHash, topic: topicHash)
        guard bloom.insert(hash) else { return }
        if suspects.count == suspects.capacity && suspects.count >= 4096 { compact() }
        suspects.append(hash)
    }

    /// The scan is over: the filter is freed, and the suspects come sorted, each once; nil when
    /// the scan could not finish.
    func finish() -> [UInt64]? {
        bloom = nil
        guard !incomplete else { return nil }
        compact()
        return suspects
    }

    /// A key seen many times adds its hash as often: sorted and made unique, the array stays the
    /// size of the keys that repeat.
    private func compact() {
        suspects.sort()
        var kept = 0
        for hash in suspects where kept == 0 || suspects[kept - 1] != hash {
            suspects[kept] = hash
            kept += 1
        }
        suspects.removeSubrange(kept...)
    }

    private func take(_ base: UnsafePointer<UInt8>, upTo end: Int) {
        guard end > captureStart else { return }
        let bytes = UnsafeBufferPointer(start: base + captureStart, count: end - captureStart)
        captureStart = end
        if capturing == 1 { append(bytes, to: &token) } else { append(bytes, to: &topic) }
    }

    private func append(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        guard buffer.count + bytes.count <= Self.captureLimit else {
            incomplete = true
            capturing = 0
            return
        }
        buffer.append(contentsOf: bytes)
    }

    private static func unquote(_ buffer: inout [UInt8]) {
        trimEnd(&buffer)
        if buffer.last == 0x22 { buffer.removeLast() }
        guard buffer.contains(0x22) else { return }
        var kept = 0
        var index = 0
        while index < buffer.count {
            buffer[kept] = buffer[index]
            index += buffer[index] == 0x22 && index + 1 < buffer.count && buffer[index + 1] == 0x22 ? 2 : 1
            kept += 1
        }
        buffer.removeSubrange(kept...)
    }

    private static func trimEnd(_ buffer: inout [UInt8]) {
        while let last = buffer.last, last == 0x20 || last == 0x09 { buffer.removeLast() }
    }
}

extension CSVHeader {
    /// The 0-based field of `column` in a row, nil when the header lacks it.
    func fieldIndex(_ column: CSVColumn) -> Int? {
        names.firstIndex { CSVColumn(headerName: $0.trimmingSpaces) == column }
    }
}
