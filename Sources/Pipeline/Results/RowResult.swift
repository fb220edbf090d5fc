import ByteScan
import APNs
import Transport

/// The final word on one row as the sending threads produce it: the fields of a `ResultRecord`,
/// with the device token still the bytes the input gave (a slice of the CSV batch, no copy) and
/// APNs' `apns-id` held inline (`APNsID`), so recording a row allocates nothing. The writer turns it
/// into one line of results.jsonl.zst (`ResultLineEncoder`) and, for a dead token, one line of
/// dead-tokens.csv.
struct RowResult: Sendable {
    // Constants without default values, so the initializer initializes each field once: an
    // optional `var` starts as nil and is then reassigned, which made every init build the
    // record in memory and copy it out (a retain and release of each of its references).
    let row: Int
    let deviceToken: ArraySlice<UInt8>
    let outcome: Outcome
    let status: Int
    let reason: String?
    /// APNs' `apns-id` for the answer, if there was one.
    let apnsID: APNsID
    let attempts: Int
    /// APNs' 410 timestamp, milliseconds since the epoch.
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
                  apnsID: APNsID(apnsID), attempts: attempts,
                  unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                  retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf, uniqueID: uniqueID,
                  lane: lane, environmentCode: environmentCode, fallbackFrom: fallbackFrom)
    }

    /// The apns-id as an answer holds it (`APNsID(of:)`).
    init(row: Int, deviceToken: ArraySlice<UInt8>, outcome: Outcome, status: Int, reason: String?, apnsID: APNsID,
         attempts: Int, unregisteredAt: Int64?, latencyMs: Double?,
         endpoint: String?, retriedAfterConnectionLoss: Bool, duplicateOf: Int = 0,
         uniqueID: UUIDBytes?, lane: UInt16, environmentCode: UInt8 = 0, fallbackFrom: UInt8) {
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

    /// The same record with another outcome and reason (APNs' answer, attempts and labels kept).
    func with(outcome: Outcome, reason: String?) -> RowResult {
        RowResult(row: row, deviceToken: deviceToken, outcome: outcome, status: status, reason: reason,
                  apnsID: apnsID, attempts: attempts, unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
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
                     status: status, reason: reason, apnsID: apnsID.string, attempts: attempts,
                     unregisteredAt: unregisteredAt, latencyMs: latencyMs, endpoint: endpoint,
                     retriedAfterConnectionLoss: retriedAfterConnectionLoss,
                     duplicateOf: duplicateOf == 0 ? nil : duplicateOf, apnsUniqueID: uniqueID?.description)
    }
}
