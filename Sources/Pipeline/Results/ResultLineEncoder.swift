import ByteScan
import ZstdFile

/// The one writer of results.jsonl.zst's lines, a contract users parse: every line of the log
/// (the writer thread's records, a resumed log's kept ones, the library's `ResultRecord.jsonLine`)
/// is written here, so that keys, their order, numbers, escaping and `null`s are spelled once. A
/// record kind is a `ResultLineFields` (send's rows: `ResultLine`), which writes its fields in
/// order through a `ResultLineOutput`; a new kind adds its fields, not another writer.
///
/// Cost: a line is written in a first pass that copies its text as it is and checks it in the same
/// stroke (`JSONLineBuffer.plain`, eight bytes a step) straight into memory reserved for the whole
/// line (the log's next frame, or one buffer copied once): no escaping loop, no array growth or
/// uniqueness check per piece, and keys known at compile time stored as immediates. The usual line
/// (hex tokens, reason names, endpoints, APNs' ids) is done then; one whose text needs escaping is
/// written again through `JSONText`. The fields reach the passes as pointers borrowed from the
/// record: a closure that captured a record would copy it (a retain and release of each of its
/// references, and through value witnesses ~210 instructions a line for an apns-id).
enum ResultLineEncoder {
    /// Appends `line` (with its newline) to `bytes`.
    static func append(_ line: some ResultLineFields, to bytes: inout [UInt8]) {
        if !appendPlain(line, to: &bytes) { appendEscaped(line, to: &bytes) }
    }

    /// Appends `line` straight into `writer`'s next frame.
    static func append(_ line: some ResultLineFields, to writer: ZstdFrameWriter) {
        var wrote = false
        writer.appendInPlace(maximumCount: line.room) { memory in
            let count = writePlain(line, into: memory)
            wrote = count > 0
            return count
        }
        if !wrote { writer.withAppendedBytes { appendEscaped(line, to: &$0) } }
    }

    /// The first pass alone: false, and nothing appended, when some text needs escaping.
    static func appendPlain(_ line: some ResultLineFields, to bytes: inout [UInt8]) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: line.room) { memory in
            let count = writePlain(line, into: memory)
            if count > 0 { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: memory[..<count])) }
            return count > 0
        }
    }

    /// The second pass alone: every text escaped as JSON needs.
    static func appendEscaped(_ line: some ResultLineFields, to bytes: inout [UInt8]) {
        var out = EscapingLineOutput()
        swap(&out.bytes, &bytes)
        line.write(to: &out)
        swap(&out.bytes, &bytes)
    }

    /// The line's length in `memory` (at least `line.room` bytes), or 0 when some text needs escaping.
    private static func writePlain(_ line: some ResultLineFields, into memory: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var out = JSONLineBuffer(memory)
        line.write(to: &out)
        return out.stops == 0 ? out.count : 0
    }

    /// A record's labels as the fields its line ends with (before the closing brace), encoded once
    /// for a run's credential groups (`RecordLabels`) or per line for a `ResultRecord`; nil when all are nil.
    static func labelFields(environment: String?, keyID: String?, fallbackFrom: String?) -> [UInt8]? {
        guard environment != nil || keyID != nil || fallbackFrom != nil else { return nil }
        var fields: [UInt8] = []
        func add(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            JSONText.appendLiteral(key, to: &fields)
            JSONText.appendString(value, to: &fields)
        }
        add(#","environment":"#, environment)
        add(#","key_id":"#, keyID)
        add(#","environment_fallback_from":"#, fallbackFrom)
        return fields
    }
}

/// A kind of record's result line: its fields in their order, `{` to `}\n`.
protocol ResultLineFields {
    /// Bytes enough for the line when no text needs escaping.
    var room: Int { get }
    func write<Output: ResultLineOutput>(to out: inout Output)
}

/// Where `ResultLineEncoder` writes a line: the first pass (`JSONLineBuffer`, text copied as it is
/// and checked) or the second (`EscapingLineOutput`).
protocol ResultLineOutput {
    /// Text known at compile time, written as it is.
    mutating func literal(_ text: StaticString)
    mutating func integer(_ value: Int64)
    /// A duration in ms rounded to microseconds (`3.1`, `0.25`, `5.0`); `null` when not finite.
    mutating func milliseconds(_ value: Double)
    /// Text between quotes the line writes itself.
    mutating func textContent(_ text: UnsafeBufferPointer<UInt8>)
    /// Bytes that are JSON already (pre-encoded fields, a UUID's text).
    mutating func verbatim(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension ResultLineOutput {
    /// `"text"`, or `null` for nil.
    @inline(__always)
    mutating func quotedOrNull(_ text: UnsafeBufferPointer<UInt8>?) {
        guard let text else { literal("null"); return }
        literal("\"")
        textContent(text)
        literal("\"")
    }
}

extension JSONLineBuffer: ResultLineOutput {
    @inline(__always)
    mutating func textContent(_ text: UnsafeBufferPointer<UInt8>) { plain(text) }
}

/// The second pass's output: an array, text escaped (and decoded as `JSONText.appendString(bytes:)` says).
struct EscapingLineOutput: ResultLineOutput {
    var bytes: [UInt8] = []

    mutating func literal(_ text: StaticString) { JSONText.appendLiteral(text, to: &bytes) }
    mutating func integer(_ value: Int64) { JSONText.appendInteger(value, to: &bytes) }
    mutating func milliseconds(_ value: Double) { JSONText.appendMilliseconds(value, to: &bytes) }
    mutating func textContent(_ text: UnsafeBufferPointer<UInt8>) { JSONText.appendStringContent(text, to: &bytes) }
    mutating func verbatim(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes.append(contentsOf: bytes) }
}
