import APNs
import Transport

/// The final word on one row as the sending threads produce it: the fields of a `ResultRecord`,
/// with the device token still the bytes the input gave (a slice of the CSV batch, no copy) and
/// APNs' `apns-id` held inline, so recording a row allocates nothing. The writer turns it into one
/// line of results.jsonl.zst (`appendJSONLine`) and, for a dead token, one line of dead-tokens.csv.
struct RowResult: Sendable {
    // Constants without default values, so the initializer initializes each field once: an
    // optional `var` starts as nil and is then reassigned, which made every init build the
    // record in memory and copy it out (a retain and release of each of its references).
    let row: Int
    let deviceToken: ArraySlice<UInt8>
    let outcome: Outcome
    let status: Int
    let reason: String?
    let apnsID: InlineText?
    let attempts: Int
    let unregisteredAt: Int64?
    let latencyMs: Double?
    let endpoint: String?
    let retriedAfterConnectionLoss: Bool
    // Three small fields in the padding after the Bool: the record is no wider for them.
    /// The row's credential group + 1 when records name `environment` and `key_id`; 0 otherwise
    /// (the writer's `RecordLabels` turns it into text).
    let lane: UInt16
    /// The environment of a row no group took (1 production, 2 sandbox; `code(of:)`), 0 for none.
    let environmentCode: UInt8
    /// `environment_fallback_from`, coded as `environmentCode`.
    let fallbackFrom: UInt8
    /// `ResultRecord.duplicateOf`, 0 for none: an optional would widen every record by a word.
    let duplicateOf: Int
    /// APNs' `apns-unique-id` (its sandbox sends one); nil, and left out of the line, otherwise.
    let uniqueID: UUIDBytes?

    init(row: Int, deviceToken: ArraySlice<UInt8>, outcome: Outcome, status: Int = 0, reason: String? = nil,
         apnsID: InlineText? = nil, attempts: Int = 0, unregisteredAt: Int64? = nil, latencyMs: Double? = nil,
         endpoint: String? = nil, retriedAfterConnectionLoss: Bool = false, duplicateOf: Int = 0,
         uniqueID: UUIDBytes? = nil, lane: UInt16 = 0, environmentCode: UInt8 = 0, fallbackFrom: UInt8 = 0) {
        self.row = row
        self.deviceToken = deviceToken
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.attempts = attempts
        self.unregisteredAt = unregisteredAt
        self.latencyMs = latencyMs
        self.endpoint = endpoint
        self.retriedAfterConnectionLoss = retriedAfterConnectionLoss
        self.duplicateOf = duplicateOf
        self.uniqueID = uniqueID
        self.lane = lane
        self.environmentCode = environmentCode
        self.fallbackFrom = fallbackFrom
    }

    /// An environment as `environmentCode` and `fallbackFrom` hold it.
    static func code(of environment: APNsEnvironment?) -> UInt8 {
        switch environment {
        case .production: 1
        case .sandbox: 2
        case nil: 0
        }
    }

    static func environment(code: UInt8) -> APNsEnvironment? {
        code == 1 ? .production : code == 2 ? .sandbox : nil
    }

    init(_ record: ResultRecord) {
        self.init(row: record.row, deviceToken: Array(record.deviceToken.utf8)[...], outcome: record.outcome,
                  status: record.status, reason: record.reason, apnsID: record.apnsID.map(InlineText.init),
                  attempts: record.attempts, unregisteredAt: record.unregisteredAt, latencyMs: record.latencyMs,
                  endpoint: record.endpoint, retriedAfterConnectionLoss: record.retriedAfterConnectionLoss,
                  duplicateOf: record.duplicateOf ?? 0, uniqueID: record.apnsUniqueID.flatMap(UUIDBytes.init))
    }

    /// The record as the result log's reader sees it.
    var record: ResultRecord {
        ResultRecord(row: row, deviceToken: String(decoding: deviceToken, as: UTF8.self), outcome: outcome,
                     status: status, reason: reason, apnsID: apnsID?.description, attempts: attempts,
                     unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                     retriedAfterConnectionLoss: retriedAfterConnectionLoss,
                     duplicateOf: duplicateOf == 0 ? nil : duplicateOf, apnsUniqueID: uniqueID?.description)
    }

    /// Appends the record as one JSON line (with its newline), in the field order of DESIGN.md.
    /// Hand-written: no Foundation, no allocation beyond `line`'s growth. The usual line (a hex
    /// token, a reason name, an endpoint, APNs' apns-id) is composed in one buffer and copied once;
    /// text that needs escaping takes the general path.
    borrowing func appendJSONLine(to line: inout [UInt8]) {
        if !appendPlainJSONLine(to: &line) { appendEscapedJSONLine(to: &line) }
    }

    /// The one-copy path; false (nothing written) when some text needs escaping.
    borrowing func appendPlainJSONLine(to line: inout [UInt8]) -> Bool {
        // The closures below see only these locals and pointers: one that read `self` would
        // capture, and so copy, the whole record (its four references) for every line.
        var reason = self.reason ?? ""
        var endpoint = self.endpoint ?? ""
        let token = deviceToken
        let apnsID = self.apnsID
        let scalars = Scalars(row: row, outcome: outcome, status: status, attempts: attempts,
                              unregisteredAt: unregisteredAt, latencyMs: latencyMs,
                              retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf,
                              uniqueID: uniqueID,
                              hasReason: self.reason != nil, hasEndpoint: self.endpoint != nil)
        return reason.withUTF8 { reasonBytes in
            endpoint.withUTF8 { endpointBytes in
                token.withUnsafeBufferPointer { token in
                    Self.withBytes(of: apnsID) { apnsIDBytes in
                        scalars.appendPlainJSONLine(to: &line, token: token, reason: reasonBytes,
                                                    endpoint: endpointBytes, apnsID: apnsIDBytes)
                    }
                }
            }
        }
    }

    private static func withBytes<Result>(of text: InlineText?, _ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard let text else { return body(nil) }
        return text.withUnsafeBytes { body($0.assumingMemoryBound(to: UInt8.self)) }
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
        var hasReason: Bool
        var hasEndpoint: Bool

        /// The line from its text, checked plain first; false (nothing written) when it is not.
        func appendPlainJSONLine(to line: inout [UInt8], token: UnsafeBufferPointer<UInt8>,
                                 reason reasonBytes: UnsafeBufferPointer<UInt8>,
                                 endpoint endpointBytes: UnsafeBufferPointer<UInt8>,
                                 apnsID: UnsafeBufferPointer<UInt8>?) -> Bool {
            guard apnsID.map(SWAR.isPlainText) ?? true, SWAR.isPlainText(token),
                  SWAR.isPlainText(reasonBytes), SWAR.isPlainText(endpointBytes) else { return false }
            let capacity = 320 + token.count + reasonBytes.count + endpointBytes.count + (apnsID?.count ?? 0)
            let scalars = self
            JSONLineBuffer.append(to: &line, capacity: capacity) { out in
                out.literal(#"{"row":"#)
                out.integer(Int64(scalars.row))
                out.literal(#","device_token":""#)
                out.verbatim(token)
                out.literal(#"","outcome":""#)
                out.literal(RowResult.literal(scalars.outcome))
                out.literal(#"","status":"#)
                out.integer(Int64(scalars.status))
                out.literal(#","reason":"#)
                out.quotedOrNull(scalars.hasReason ? reasonBytes : nil)
                out.literal(#","apns_id":"#)
                out.quotedOrNull(apnsID)
                out.literal(#","attempts":"#)
                out.integer(Int64(scalars.attempts))
                out.literal(#","unregistered_at":"#)
                if let unregisteredAt = scalars.unregisteredAt { out.integer(unregisteredAt) } else { out.literal("null") }
                out.literal(#","latency_ms":"#)
                if let latencyMs = scalars.latencyMs { out.milliseconds(latencyMs) } else { out.literal("null") }
                out.literal(#","endpoint":"#)
                out.quotedOrNull(scalars.hasEndpoint ? endpointBytes : nil)
                if scalars.retriedAfterConnectionLoss { out.literal(#","retried_after_connection_loss":true"#) }
                if scalars.duplicateOf != 0 {
                    out.literal(#","duplicate_of":"#)
                    out.integer(Int64(scalars.duplicateOf))
                }
                if let uniqueID = scalars.uniqueID {
                    out.literal(#","apns_unique_id":""#)
                    uniqueID.withText { out.verbatim($0) }
                    out.byte(UInt8(ascii: "\""))
                }
                out.literal("}\n")
            }
            return true
        }
    }

    /// The general path: every string escaped as JSON needs.
    func appendEscapedJSONLine(to line: inout [UInt8]) {
        JSONText.appendLiteral(#"{"row":"#, to: &line)
        JSONText.appendInteger(Int64(row), to: &line)
        JSONText.appendLiteral(#","device_token":"#, to: &line)
        JSONText.appendString(bytes: deviceToken, to: &line)
        JSONText.appendLiteral(#","outcome":""#, to: &line)
        JSONText.appendLiteral(Self.literal(outcome), to: &line)
        JSONText.appendLiteral(#"","status":"#, to: &line)
        JSONText.appendInteger(Int64(status), to: &line)
        JSONText.appendLiteral(#","reason":"#, to: &line)
        JSONText.appendOptionalString(reason, to: &line)
        JSONText.appendLiteral(#","apns_id":"#, to: &line)
        if let apnsID {
            // APNs' ids are plain ASCII: copy them as they are, and escape only what needs it.
            let start = line.count
            line.append(UInt8(ascii: "\""))
            apnsID.append(to: &line)
            if line[(start + 1)...].contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 }) {
                line.removeSubrange(start...)
                JSONText.appendString(apnsID.description, to: &line)
            } else {
                line.append(UInt8(ascii: "\""))
            }
        } else {
            JSONText.appendLiteral("null", to: &line)
        }
        JSONText.appendLiteral(#","attempts":"#, to: &line)
        JSONText.appendInteger(Int64(attempts), to: &line)
        JSONText.appendLiteral(#","unregistered_at":"#, to: &line)
        if let unregisteredAt { JSONText.appendInteger(unregisteredAt, to: &line) } else { JSONText.appendLiteral("null", to: &line) }
        JSONText.appendLiteral(#","latency_ms":"#, to: &line)
        if let latencyMs { JSONText.appendMilliseconds(latencyMs, to: &line) } else { JSONText.appendLiteral("null", to: &line) }
        JSONText.appendLiteral(#","endpoint":"#, to: &line)
        JSONText.appendOptionalString(endpoint, to: &line)
        if retriedAfterConnectionLoss { JSONText.appendLiteral(#","retried_after_connection_loss":true"#, to: &line) }
        if duplicateOf != 0 {
            JSONText.appendLiteral(#","duplicate_of":"#, to: &line)
            JSONText.appendInteger(Int64(duplicateOf), to: &line)
        }
        if let uniqueID {
            JSONText.appendLiteral(#","apns_unique_id":""#, to: &line)
            uniqueID.append(to: &line)
            line.append(UInt8(ascii: "\""))
        }
        JSONText.appendLiteral("}\n", to: &line)
    }

    /// `Outcome.rawValue`, as text the compiler keeps.
    fileprivate static func literal(_ outcome: Outcome) -> StaticString {
        switch outcome {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        case .badToken: "bad_token"
        case .failed: "failed"
        case .rejected: "rejected"
        case .gaveUp: "gave_up"
        case .aborted: "aborted"
        }
    }
}
