import ByteScan

/// A row's line of results.jsonl.zst (docs/file-formats.md, "results.jsonl.zst") as
/// `ResultLineEncoder` writes it, from a `RowResult` or a `ResultRecord`: its numbers, and its
/// text as bytes borrowed from the record (nil for a field written `null`).
struct ResultLine: ResultLineFields {
    var row: Int
    var token = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    var outcome: Outcome
    var status: Int
    var reason: UnsafeBufferPointer<UInt8>?
    var apnsID: UnsafeBufferPointer<UInt8>?
    var attempts: Int
    var unregisteredAt: Int64?
    var latencyMs: Double?
    var endpoint: UnsafeBufferPointer<UInt8>?
    /// Written only when true.
    var retriedAfterConnectionLoss: Bool
    /// Written only when nonzero.
    var duplicateOf: Int
    /// Written only when there is one.
    var uniqueID: UUIDBytes?
    /// The record's labels, JSON already (`ResultLineEncoder.labelFields`), before the closing brace.
    var labels: UnsafeBufferPointer<UInt8>?

    /// The line's numbers; its text is set where it is borrowed.
    init(row: Int, outcome: Outcome, status: Int, attempts: Int, unregisteredAt: Int64?, latencyMs: Double?,
         retriedAfterConnectionLoss: Bool, duplicateOf: Int, uniqueID: UUIDBytes?) {
        self.row = row
        self.outcome = outcome
        self.status = status
        self.attempts = attempts
        self.unregisteredAt = unregisteredAt
        self.latencyMs = latencyMs
        self.retriedAfterConnectionLoss = retriedAfterConnectionLoss
        self.duplicateOf = duplicateOf
        self.uniqueID = uniqueID
    }

    /// Room for the line when its text needs no escaping: the text, and over what the rest can
    /// take (keys ~220 bytes, five integers of up to 20, a duration of up to 40, `apns_unique_id`'s
    /// 36, and the `JSONLineBuffer.integerBytes` each integer's check wants free).
    var room: Int {
        512 + token.count + (reason?.count ?? 0) + (endpoint?.count ?? 0) + (apnsID?.count ?? 0) + (labels?.count ?? 0)
    }

    /// The fields in the order of docs/file-formats.md. The keys around the usual values (a
    /// delivered row's status and reason, one attempt) go as one constant each, which the first
    /// pass writes as stores of immediates.
    func write<Output: ResultLineOutput>(to out: inout Output) {
        out.literal(#"{"row":"#)
        out.integer(Int64(row))
        out.literal(#","device_token":""#)
        out.textContent(token)
        if outcome == .delivered && status == 200 && reason == nil {
            out.literal(#"","outcome":"delivered","status":200,"reason":null,"apns_id":"#)
        } else {
            writeOutcome(&out)
            out.integer(Int64(status))
            out.literal(#","reason":"#)
            out.quotedOrNull(reason)
            out.literal(#","apns_id":"#)
        }
        out.quotedOrNull(apnsID)
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
        out.quotedOrNull(endpoint)
        if retriedAfterConnectionLoss { out.literal(#","retried_after_connection_loss":true"#) }
        if duplicateOf != 0 {
            out.literal(#","duplicate_of":"#)
            out.integer(Int64(duplicateOf))
        }
        if let uniqueID {
            out.literal(#","apns_unique_id":""#)
            uniqueID.withText { out.verbatim($0) }
            out.literal("\"")
        }
        if let labels { out.verbatim(labels) }
        out.literal("}\n")
    }

    /// `","outcome":"<outcome>","status":`, one constant per outcome.
    @inline(__always)
    private func writeOutcome<Output: ResultLineOutput>(_ out: inout Output) {
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

    /// Runs `body` with the UTF-8 of a record's optional texts, in place when the strings hold it
    /// contiguously (a native one always does): no copy of a string, so no retain and release of
    /// its storage per line.
    static func withUTF8<Result>(of reason: borrowing String?, _ endpoint: borrowing String?,
                                 _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        withUTF8(of: reason) { reason in withUTF8(of: endpoint) { body(reason, $0) } }
    }

    static func withUTF8<Result>(of text: String?, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard let text else { return body(nil) }
        if let result = text.utf8.withContiguousStorageIfAvailable({ body($0) }) { return result }
        var contiguous = text
        return contiguous.withUTF8 { body($0) }
    }
}
