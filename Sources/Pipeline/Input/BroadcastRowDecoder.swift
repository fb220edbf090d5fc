import APNs
import Transport

/// A broadcast row (`channel_id,payload[,priority,expiration,apns_request_id]`) turned into a job, or
/// into the reason it is `rejected`, checked as APNs checks a broadcast (docs/apns.md): the channel id
/// (MissingChannelId, BadChannelId), priority (BadPriority), expiration (BadExpirationDate: not
/// whole seconds, or negative), request id (BadMessageId: not a lowercase UUID), payload
/// (PayloadEmpty, PayloadTooLarge over 5,120 bytes, InvalidPayload when not a JSON object) and
/// ActivityKit's rule that a broadcast cannot start an activity (`LiveActivityPayload`).
///
/// The job is a device push's: its `:path` token is empty (the path is the app's broadcast path,
/// `RequestTemplates`), the input's token is the channel id (its record's), and its headers are
/// its own (`RowHeaders(broadcast:)`): `apns-channel-id` and every value of the row, so that an
/// answer about one is that row's (`failed`), never a run-wide refusal.
/// A class, so that `RowDecoder` reaches it per row without copying its strings and headers.
final class BroadcastRowDecoder: Sendable {
    /// `--priority` and `--expiration`, checked by the command.
    let priority: String
    let expiration: String
    private let runExpiration: Int64
    /// What every row's `RowHeaders.values` says (push type liveactivity, no topic).
    private let values: NotificationHeaders
    /// The run's header fields (`apns-push-type`, `apns-expiration`, `apns-priority`), which a row
    /// with no priority or expiration of its own sends with its channel after them.
    let runHeaders: RowHeaders

    init(priority: String?, expiration: String?) {
        self.priority = priority ?? "10"
        self.expiration = expiration ?? "0"
        runExpiration = HeaderRules.expirationSeconds(self.expiration) ?? 0
        do {
            values = try NotificationHeaders(parsing: HeaderValues(pushType: PushType.liveactivity.headerValue),
                                             auth: .certificate)
        } catch {
            preconditionFailure("a liveactivity push with no topic is well-formed under certificate auth: \(error)")
        }
        runHeaders = RowHeaders(broadcast: Self.valueFields(expiration: self.expiration, priority: self.priority),
                                expiration: runExpiration, values: values, extendsRun: false)
        channelHeaders = RowHeaders(broadcast: [], expiration: runExpiration, values: values, extendsRun: true,
                                    inputTokenField: BroadcastRules.channelIDHeader)
    }

    /// The headers of a row with no priority, expiration or request id of its own (the usual one):
    /// the run's fields and then `apns-channel-id` (indexed on a connection's first request only,
    /// never indexed after it), whose value the request takes
    /// from the row's bytes (its input token: `RowHeaders.inputTokenField`). One for all such
    /// rows, so that they allocate nothing for their headers and share one encoded header block.
    private let channelHeaders: RowHeaders

    /// Row `index` of `batch`; `spares` supplies a spent job to reuse, as for device pushes.
    /// A row with a priority or expiration of its own, or a request id, has its own header fields:
    /// its channel's among them (after the run's fields when it only adds a request id:
    /// `RowHeaders.extendsRun`).
    func decode(_ batch: borrowing CSVBatch, at index: Int, spares: JobSpares?) -> RowDecoder.Decoded {
        if let problem = batch.problem(at: index) { return .rejected(reason: problem.reason) }
        let storage = batch.storage
        let channelRange = batch.fieldRange(.deviceToken, at: index) ?? 0..<0
        if let reason = Self.channelProblem(storage, in: channelRange) { return .rejected(reason: reason.name) }
        let ownPriority = Self.text(batch, .priority, at: index)
        if let ownPriority, let reason = BroadcastRules.checkPriority(ownPriority) { return .rejected(reason: reason.name) }
        let ownExpiration = Self.text(batch, .expiration, at: index)
        var expiration = runExpiration
        if let ownExpiration {
            guard let seconds = HeaderRules.expirationSeconds(ownExpiration) else {
                return .rejected(reason: Reason.badExpirationDate.name)
            }
            expiration = seconds
        }
        let requestID = Self.text(batch, .apnsID, at: index)
        if let reason = BroadcastRules.checkRequestID(requestID) { return .rejected(reason: reason.name) }
        let payloadRange = batch.fieldRange(.payload, at: index) ?? 0..<0
        if let verdict = Self.payloadVerdict(storage, in: payloadRange) { return verdict }

        let extendsRun = ownPriority == nil && ownExpiration == nil
        let headers: RowHeaders
        if extendsRun && requestID == nil {
            headers = channelHeaders
        } else {
            // Indexed on a connection's first request only, as a usual row's (`H2ClientSession`): a
            // campaign's many channels would churn HPACK's table, each one entered and evicted, but
            // the first one enters the field's name, which later requests then send by index.
            let channel = String(decoding: storage[channelRange], as: UTF8.self)
            var fields = [H2Header(BroadcastRules.channelIDHeader, channel, indexing: .indexedOnFirstRequestOnly)]
            if let requestID { fields.append(H2Header(BroadcastRules.requestIDHeader, requestID, indexing: .neverIndexed)) }
            if !extendsRun {
                fields += Self.valueFields(expiration: ownExpiration ?? self.expiration, priority: ownPriority ?? priority)
            }
            headers = RowHeaders(broadcast: fields, expiration: expiration, values: values, extendsRun: extendsRun)
        }
        let bytes = RowBytes(in: storage, pathToken: 0..<0, inputToken: channelRange, payload: payloadRange,
                             headers: headers)
        let row = batch.number(at: index)
        guard let job = spares?.next() else { return .send(Job(row: row, bytes)) }
        job.reuse(row: row, bytes)
        return .send(job)
    }

    /// `apns-push-type`, `apns-expiration` and `apns-priority` with these values.
    private static func valueFields(expiration: String, priority: String) -> [H2Header] {
        [pushTypeField, H2Header("apns-expiration", expiration, indexing: .indexed),
         H2Header("apns-priority", priority, indexing: .indexed)]
    }

    private static let pushTypeField = H2Header("apns-push-type", PushType.liveactivity.headerValue, indexing: .indexed)

    /// The column's text at row `index`, nil when empty or absent.
    private static func text(_ batch: borrowing CSVBatch, _ column: CSVColumn, at index: Int) -> String? {
        guard let field = batch.field(column, at: index), !field.isEmpty else { return nil }
        return String(decoding: field, as: UTF8.self)
    }

    /// What APNs would answer for the channel id (`BroadcastRules.checkChannelID`), read in place.
    private static func channelProblem(_ bytes: [UInt8], in range: Range<Int>) -> Reason? {
        if range.isEmpty { return .missingChannelId }
        let wellFormed = bytes.withUnsafeBufferPointer {
            BroadcastRules.isWellFormedChannelID(bytes: UnsafeBufferPointer(rebasing: $0[range]))
        }
        return wellFormed ? nil : .badChannelId
    }

    /// What APNs would answer for the body (the broadcast size limit, not a device push's), or the
    /// ActivityKit rule it breaks (a broadcast cannot start an activity), or nil to send it: read in
    /// place, validated and read for the rules in one pass.
    private static func payloadVerdict(_ bytes: [UInt8], in range: Range<Int>) -> RowDecoder.Decoded? {
        if range.isEmpty { return .rejected(reason: Reason.payloadEmpty.name) }
        if range.count > BroadcastRules.payloadBytes { return .rejected(reason: Reason.payloadTooLarge.name) }
        let payload = bytes.withUnsafeBufferPointer { LiveActivityPayload(validating: UnsafeBufferPointer(rebasing: $0[range])) }
        guard let payload else { return .rejected(reason: Reason.invalidPayload.name) }
        return payload.brokenRule(route: .broadcast).map { .breaksLiveActivityRule($0) }
    }
}
