import ByteScan
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
    /// APNs' `apns-id`: its text (empty without one) and whether there was one. Not an
    /// `InlineText?`, which is copied and destroyed through the runtime's generic enum witnesses
    /// (~100 instructions each, a few times a row), nor an `InlineText`, whose copies are calls
    /// (~100 instructions a row): its bytes as plain memory, and the rare longer value apart.
    let apnsIDBytes: InlineBytes
    let apnsIDOverflow: String?
    let hasAPNsID: Bool
    var apnsIDValue: InlineText { InlineText(apnsIDBytes, overflow: apnsIDOverflow) }
    var apnsID: InlineText? { hasAPNsID ? apnsIDValue : nil }
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
        self.init(row: row, deviceToken: deviceToken, outcome: outcome, status: status, reason: reason,
                  apnsIDBytes: apnsID?.inlineBytes ?? InlineBytes(), apnsIDOverflow: apnsID?.overflowText,
                  hasAPNsID: apnsID != nil, attempts: attempts,
                  unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                  retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf, uniqueID: uniqueID,
                  lane: lane, environmentCode: environmentCode, fallbackFrom: fallbackFrom)
    }

    /// The apns-id as an answer holds it (`H2Response.apnsIDValue`'s parts, `hasAPNsID`).
    init(row: Int, deviceToken: ArraySlice<UInt8>, outcome: Outcome, status: Int, reason: String?,
         apnsIDBytes: InlineBytes, apnsIDOverflow: String?, hasAPNsID: Bool, attempts: Int, unregisteredAt: Int64?,
         latencyMs: Double?,
         endpoint: String?, retriedAfterConnectionLoss: Bool, duplicateOf: Int = 0,
         uniqueID: UUIDBytes?, lane: UInt16, environmentCode: UInt8 = 0, fallbackFrom: UInt8) {
        self.row = row
        self.deviceToken = deviceToken
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.apnsIDBytes = apnsIDBytes
        self.apnsIDOverflow = apnsIDOverflow
        self.hasAPNsID = hasAPNsID
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

    /// The same record with another outcome and reason (APNs' answer, attempts and labels kept).
    func with(outcome: Outcome, reason: String?) -> RowResult {
        RowResult(row: row, deviceToken: deviceToken, outcome: outcome, status: status, reason: reason,
                  apnsIDBytes: apnsIDBytes, apnsIDOverflow: apnsIDOverflow, hasAPNsID: hasAPNsID, attempts: attempts,
                  unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                  retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf, uniqueID: uniqueID,
                  lane: lane, environmentCode: environmentCode, fallbackFrom: fallbackFrom)
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

    /// Appends the record as one JSON line (with its newline), in the field order of docs/file-formats.md.
    /// Hand-written: no Foundation, no allocation beyond `line`'s growth. The usual line (plain text
    /// only) is composed in one buffer and copied once (`RowResult+PlainLine`); text that needs
    /// escaping takes the general path.
    borrowing func appendJSONLine(to line: inout [UInt8]) {
        if !appendPlainJSONLine(to: &line) { appendEscapedJSONLine(to: &line) }
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
