/// The final word on one row: one line of results.jsonl.zst (DESIGN.md "Files it writes").
public struct ResultRecord: Sendable, Equatable {
    /// 1-based data row, header excluded.
    public var row: Int
    /// Exactly as the input gave it, so a database can match it.
    public var deviceToken: String
    public var outcome: Outcome
    /// HTTP status from APNs; 0 when never sent.
    public var status: Int
    public var reason: String?
    public var apnsID: String?
    public var attempts: Int
    /// APNs' 410 timestamp, milliseconds since the epoch; nil otherwise.
    public var unregisteredAt: Int64?
    /// Written with microsecond precision.
    public var latencyMs: Double?
    public var endpoint: String?
    /// Written only when true.
    public var retriedAfterConnectionLoss: Bool

    public init(row: Int, deviceToken: String, outcome: Outcome, status: Int = 0, reason: String? = nil,
                apnsID: String? = nil, attempts: Int = 0, unregisteredAt: Int64? = nil, latencyMs: Double? = nil,
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

    /// Appends the record as one JSON line (with its newline), in the field order of DESIGN.md.
    /// Hand-written: no Foundation, no allocation beyond `line`'s growth.
    public func appendJSONLine(to line: inout [UInt8]) {
        line.append(contentsOf: #"{"row":"#.utf8)
        JSONText.appendInteger(Int64(row), to: &line)
        line.append(contentsOf: #","device_token":"#.utf8)
        JSONText.appendString(deviceToken, to: &line)
        line.append(contentsOf: #","outcome":""#.utf8)
        line.append(contentsOf: outcome.rawValue.utf8)
        line.append(contentsOf: #"","status":"#.utf8)
        JSONText.appendInteger(Int64(status), to: &line)
        line.append(contentsOf: #","reason":"#.utf8)
        JSONText.appendOptionalString(reason, to: &line)
        line.append(contentsOf: #","apns_id":"#.utf8)
        JSONText.appendOptionalString(apnsID, to: &line)
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

    public var jsonLine: String {
        var bytes: [UInt8] = []
        appendJSONLine(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
