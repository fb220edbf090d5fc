import ByteScan

/// The final word on one row: one line of results.jsonl.zst (docs/file-formats.md, "results.jsonl.zst").
public struct ResultRecord: Sendable, Equatable {
    /// 1-based data row, header excluded.
    public var row: Int
    /// Exactly as the input gave it, so a database can match it.
    public var deviceToken: String
    /// How the row ended.
    public var outcome: Outcome
    /// HTTP status from APNs; 0 when never sent.
    public var status: Int
    /// APNs' reason (or this project's, e.g. FieldTooLarge, Interrupted); nil when delivered.
    public var reason: String?
    /// APNs' `apns-id` for the request; nil when never answered.
    public var apnsID: String?
    /// Requests sent for the row; 0 when it was never sent.
    public var attempts: Int
    /// APNs' 410 timestamp, milliseconds since the epoch; nil otherwise.
    public var unregisteredAt: Int64?
    /// Written with microsecond precision.
    public var latencyMs: Double?
    /// The endpoint that gave the final answer; nil when never answered.
    public var endpoint: String?
    /// Written only when true.
    public var retriedAfterConnectionLoss: Bool
    /// For a `DuplicateToken` rejection, the row with the same token (and topic) that was sent;
    /// nil (and left out of the line) otherwise.
    public var duplicateOf: Int?
    /// APNs' `apns-unique-id` for the answer (its sandbox sends one: the key to the Push
    /// Notifications Console's delivery log); nil (and left out of the line) when APNs sent none.
    /// Only a UUID is written (lowercase); any other text is left out.
    public var apnsUniqueID: String?
    /// The row's environment (`production`, `sandbox`), when more than one credential or
    /// environment is in play; nil (and left out of the line) otherwise.
    public var environment: String?
    /// The label (key id, certificate subject) of the credential that sent the row, under the
    /// same condition; nil for a row no credential took.
    public var keyID: String?
    /// `--environment-fallback`: the environment whose BadDeviceToken moved the row; nil otherwise.
    public var environmentFallbackFrom: String?
    /// The kind of row: a device push's, or a Live Activity broadcast's, whose line names
    /// `deviceToken` `channel_id` (the channel id, as the input gave it) and `apnsID`
    /// `apns_request_id` (`BroadcastResultLine`).
    public var kind = Kind.deviceToken

    /// What a record is of (docs/file-formats.md).
    public enum Kind: Sendable, Equatable {
        /// A device push (`send`): `device_token`, `apns_id`.
        case deviceToken
        /// A Live Activity broadcast (`broadcast`): `channel_id`, `apns_request_id`.
        case broadcast
    }

    /// A record; what a row never got (status, reason, ...) is left out.
    public init(row: Int, deviceToken: String, outcome: Outcome, status: Int = 0, reason: String? = nil,
                apnsID: String? = nil, attempts: Int = 0, unregisteredAt: Int64? = nil, latencyMs: Double? = nil,
                endpoint: String? = nil, retriedAfterConnectionLoss: Bool = false, duplicateOf: Int? = nil,
                apnsUniqueID: String? = nil) {
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
        self.apnsUniqueID = apnsUniqueID
    }

    /// Appends the record as one JSON line (with its newline), in the field order of docs/file-formats.md.
    public func appendJSONLine(to line: inout [UInt8]) {
        withLine { fields in
            if kind == .broadcast {
                ResultLineEncoder.append(BroadcastResultLine(line: fields), to: &line)
            } else {
                ResultLineEncoder.append(fields, to: &line)
            }
        }
    }

    /// Runs `body` with the record's line (`ResultLineEncoder`).
    func withLine<Result>(_ body: (ResultLine) -> Result) -> Result {
        var line = ResultLine(row: row, outcome: outcome, status: status, attempts: attempts,
                              unregisteredAt: unregisteredAt, latencyMs: latencyMs,
                              retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf ?? 0,
                              uniqueID: apnsUniqueID.flatMap(UUIDBytes.init))
        let labels = ResultLineEncoder.labelFields(environment: environment, keyID: keyID,
                                                   fallbackFrom: environmentFallbackFrom)
        var token = deviceToken
        return token.withUTF8 { token in
            ResultLine.withUTF8(of: reason, endpoint) { reason, endpoint in
                ResultLine.withUTF8(of: apnsID) { apnsID in
                    (labels ?? []).withUnsafeBufferPointer { fields in
                        line.token = token
                        line.reason = reason
                        line.endpoint = endpoint
                        line.apnsID = apnsID
                        line.labels = labels == nil ? nil : fields
                        return body(line)
                    }
                }
            }
        }
    }

    /// The record as its result log line (with the newline).
    public var jsonLine: String {
        var bytes: [UInt8] = []
        appendJSONLine(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
