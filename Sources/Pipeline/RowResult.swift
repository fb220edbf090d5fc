import Transport

/// The final word on one row as the sending threads produce it: the fields of a `ResultRecord`,
/// with the device token still the bytes the input gave (a slice of the CSV batch, no copy) and
/// APNs' `apns-id` held inline, so recording a row allocates nothing. The writer turns it into one
/// line of results.jsonl.zst (`appendJSONLine`) and, for a dead token, one line of dead-tokens.csv.
struct RowResult: Sendable {
    var row: Int
    var deviceToken: ArraySlice<UInt8>
    var outcome: Outcome
    var status = 0
    var reason: String?
    var apnsID: InlineText?
    var attempts = 0
    var unregisteredAt: Int64?
    var latencyMs: Double?
    var endpoint: String?
    var retriedAfterConnectionLoss = false

    init(row: Int, deviceToken: ArraySlice<UInt8>, outcome: Outcome, status: Int = 0, reason: String? = nil,
         apnsID: InlineText? = nil, attempts: Int = 0, unregisteredAt: Int64? = nil, latencyMs: Double? = nil,
         endpoint: String? = nil, retriedAfterConnectionLoss: Bool = false) {
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
    }

    init(_ record: ResultRecord) {
        self.init(row: record.row, deviceToken: Array(record.deviceToken.utf8)[...], outcome: record.outcome,
                  status: record.status, reason: record.reason, apnsID: record.apnsID.map(InlineText.init),
                  attempts: record.attempts, unregisteredAt: record.unregisteredAt, latencyMs: record.latencyMs,
                  endpoint: record.endpoint, retriedAfterConnectionLoss: record.retriedAfterConnectionLoss)
    }

    /// The record as the result log's reader sees it.
    var record: ResultRecord {
        ResultRecord(row: row, deviceToken: String(decoding: deviceToken, as: UTF8.self), outcome: outcome,
                     status: status, reason: reason, apnsID: apnsID?.description, attempts: attempts,
                     unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                     retriedAfterConnectionLoss: retriedAfterConnectionLoss)
    }

    /// Appends the record as one JSON line (with its newline), in the field order of DESIGN.md.
    /// Hand-written: no Foundation, no allocation beyond `line`'s growth.
    func appendJSONLine(to line: inout [UInt8]) {
        line.append(contentsOf: #"{"row":"#.utf8)
        JSONText.appendInteger(Int64(row), to: &line)
        line.append(contentsOf: #","device_token":"#.utf8)
        JSONText.appendString(bytes: deviceToken, to: &line)
        line.append(contentsOf: #","outcome":""#.utf8)
        line.append(contentsOf: outcome.rawValue.utf8)
        line.append(contentsOf: #"","status":"#.utf8)
        JSONText.appendInteger(Int64(status), to: &line)
        line.append(contentsOf: #","reason":"#.utf8)
        JSONText.appendOptionalString(reason, to: &line)
        line.append(contentsOf: #","apns_id":"#.utf8)
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
            line.append(contentsOf: "null".utf8)
        }
        line.append(contentsOf: #","attempts":"#.utf8)
        JSONText.appendInteger(Int64(attempts), to: &line)
        line.append(contentsOf: #","unregistered_at":"#.utf8)
        if let unregisteredAt { JSONText.appendInteger(unregisteredAt, to: &line) } else { line.append(contentsOf: "null".utf8) }
        line.append(contentsOf: #","latency_ms":"#.utf8)
        if let latencyMs { JSONText.appendMilliseconds(latencyMs, to: &line) } else { line.append(contentsOf: "null".utf8) }
        line.append(contentsOf: #","endpoint":"#.utf8)
        JSONText.appendOptionalString(endpoint, to: &line)
        if retriedAfterConnectionLoss { line.append(contentsOf: #","retried_after_connection_loss":true"#.utf8) }
        line.append(contentsOf: "}\n".utf8)
    }
}
