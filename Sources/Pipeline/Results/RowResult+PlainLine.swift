import ByteScan
import Transport
import ZstdFile

/// The result line of a record whose text needs no escaping (a hex token, a reason name, an
/// endpoint, APNs' apns-id): the usual line, written in one pass that copies each text and checks
/// it at once, straight into the result log's next frame or into one buffer copied once.
extension RowResult {
    /// The one-copy path; false (nothing written) when some text needs escaping.
    borrowing func appendPlainJSONLine(to line: inout [UInt8]) -> Bool {
        withLineTexts { scalars, texts in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: texts.lineBound) { memory in
                let count = scalars.writePlainLine(into: memory, texts)
                if count > 0 { line.append(contentsOf: UnsafeBufferPointer(rebasing: memory[..<count])) }
                return count > 0
            }
        }
    }

    /// The line written straight into `writer`'s next frame; false (nothing written) when some text
    /// needs escaping.
    ///
    /// `suffix`: fields written as they are before the line's closing brace (a credential group's
    /// labels, `RecordLabels`), so that a labelled line too is written in place.
    borrowing func appendPlainJSONLine(to writer: ZstdFrameWriter, suffix: UnsafeBufferPointer<UInt8>? = nil) -> Bool {
        withLineTexts(suffix: suffix) { scalars, texts in
            var wrote = false
            writer.appendInPlace(maximumCount: texts.lineBound) { memory in
                let count = scalars.writePlainLine(into: memory, texts)
                wrote = count > 0
                return count
            }
            return wrote
        }
    }

    /// Runs `body` with the record's numbers and its text as bytes. The fields go in as arguments,
    /// borrowed: a closure that read `self` would capture, and so copy, the whole record (its four
    /// references) for every line, and passing `self` itself copied it too.
    private borrowing func withLineTexts<Result>(suffix: UnsafeBufferPointer<UInt8>? = nil,
                                                 _ body: (Scalars, LineTexts) -> Result) -> Result {
        let scalars = Scalars(row: row, outcome: outcome, status: status, attempts: attempts,
                              unregisteredAt: unregisteredAt, latencyMs: latencyMs,
                              retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf,
                              uniqueID: uniqueID)
        return Self.withLineTexts(token: deviceToken, reason: reason, endpoint: endpoint, apnsID: apnsIDBytes,
                                  apnsIDOverflow: apnsIDOverflow, hasAPNsID: hasAPNsID, suffix: suffix) {
            body(scalars, $0)
        }
    }

    /// The record's text read in place, each field borrowed by the closures (a `borrowing`
    /// parameter is never copied): capturing copies of them cost the apns-id's copy and
    /// destruction (through its type's value witnesses, ~210 instructions a line).
    private static func withLineTexts<Result>(token: borrowing ArraySlice<UInt8>, reason: borrowing String?,
                                              endpoint: borrowing String?, apnsID: InlineBytes,
                                              apnsIDOverflow: borrowing String?, hasAPNsID: Bool,
                                              suffix: UnsafeBufferPointer<UInt8>?,
                                              _ body: (LineTexts) -> Result) -> Result {
        token.withUnsafeBufferPointer { token in
            withUTF8(of: reason) { reason in
                withUTF8(of: endpoint) { endpoint in
                    withBytes(of: apnsID, overflow: apnsIDOverflow, present: hasAPNsID) { apnsID in
                        body(LineTexts(token: token, reason: reason, endpoint: endpoint, apnsID: apnsID, suffix: suffix))
                    }
                }
            }
        }
    }

    /// The text's UTF-8 in place when the string holds it contiguously (a native one always does):
    /// no copy of the string, so no retain and release of its storage per line.
    private static func withUTF8<Result>(of text: String?, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard let text else { return body(nil) }
        if let result = text.utf8.withContiguousStorageIfAvailable({ body($0) }) { return result }
        var contiguous = text
        return contiguous.withUTF8 { body($0) }
    }

    private static func withBytes<Result>(of bytes: InlineBytes, overflow: borrowing String?, present: Bool,
                                          _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard present else { return body(nil) }
        if overflow != nil { return withUTF8(of: overflow, body) }
        return bytes.withUnsafeBytes { body($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// A line's text as bytes; nil for a field the line writes as `null`.
    struct LineTexts {
        let token: UnsafeBufferPointer<UInt8>
        let reason: UnsafeBufferPointer<UInt8>?
        let endpoint: UnsafeBufferPointer<UInt8>?
        let apnsID: UnsafeBufferPointer<UInt8>?
        /// Written verbatim before the closing brace (JSON fields with their leading comma).
        let suffix: UnsafeBufferPointer<UInt8>?

        /// Room for any line with this text: the text, and over what the rest can take (keys ~220
        /// bytes, five integers of up to 20, a duration of up to 40, `apns_unique_id`'s 36, and the
        /// `JSONLineBuffer.integerBytes` each integer's check wants free).
        var lineBound: Int {
            512 + token.count + (reason?.count ?? 0) + (endpoint?.count ?? 0) + (apnsID?.count ?? 0) + (suffix?.count ?? 0)
        }
    }

    /// What a line holds besides its text: copied into the closures that write it.
    struct Scalars {
        var row: Int
        var outcome: Outcome
        var status: Int
        var attempts: Int
        var unregisteredAt: Int64?
        var latencyMs: Double?
        var retriedAfterConnectionLoss: Bool
        var duplicateOf: Int
        var uniqueID: UUIDBytes?

        /// Writes the line into `memory` (at least `texts.lineBound` bytes) and returns its length,
        /// or 0 when some text needs escaping (what was written is then to be ignored). The keys
        /// around the usual values (a delivered row's status and reason, one attempt) go as one
        /// constant each, which the compiler writes as stores of immediates.
        func writePlainLine(into memory: UnsafeMutableBufferPointer<UInt8>, _ texts: LineTexts) -> Int {
            var out = JSONLineBuffer(memory)
            out.literal(#"{"row":"#)
            out.integer(Int64(row))
            out.literal(#","device_token":""#)
            out.plain(texts.token)
            if outcome == .delivered && status == 200 && texts.reason == nil {
                out.literal(#"","outcome":"delivered","status":200,"reason":null,"apns_id":"#)
            } else {
                writeOutcome(&out)
                out.integer(Int64(status))
                out.literal(#","reason":"#)
                out.quotedPlainOrNull(texts.reason)
                out.literal(#","apns_id":"#)
            }
            out.quotedPlainOrNull(texts.apnsID)
            if attempts == 1 && unregisteredAt == nil {
                out.literal(#","attempts":1,"unregistered_at":null,"latency_ms":"#)
            } else {
                out.literal(#","attempts":"#)
                out.integer(Int64(attempts))
                out.literal(#","unregistered_at":"#)
                if let unregisteredAt { out.integer(unregisteredAt) } else { out.literal("null") }
                out.literal(#","latency_ms":"#)
            }
            if let latencyMs { out.milliseconds(latencyMs) } else { out.literal("null") }
            out.literal(#","endpoint":"#)
            out.quotedPlainOrNull(texts.endpoint)
            if retriedAfterConnectionLoss { out.literal(#","retried_after_connection_loss":true"#) }
            if duplicateOf != 0 {
                out.literal(#","duplicate_of":"#)
                out.integer(Int64(duplicateOf))
            }
            if let uniqueID {
                out.literal(#","apns_unique_id":""#)
                uniqueID.withText { out.verbatim($0) }
                out.byte(UInt8(ascii: "\""))
            }
            if let suffix = texts.suffix { out.verbatim(suffix) }
            out.literal("}\n")
            return out.stops == 0 ? out.count : 0
        }

        /// `","outcome":"<outcome>","status":`, one constant per outcome.
        @inline(__always)
        private func writeOutcome(_ out: inout JSONLineBuffer) {
            switch outcome {
            case .delivered: out.literal(#"","outcome":"delivered","status":"#)
            case .unregistered: out.literal(#"","outcome":"unregistered","status":"#)
            case .badToken: out.literal(#"","outcome":"bad_token","status":"#)
            case .failed: out.literal(#"","outcome":"failed","status":"#)
            case .rejected: out.literal(#"","outcome":"rejected","status":"#)
            case .gaveUp: out.literal(#"","outcome":"gave_up","status":"#)
            case .aborted: out.literal(#"","outcome":"aborted","status":"#)
            }
        }
    }
}
