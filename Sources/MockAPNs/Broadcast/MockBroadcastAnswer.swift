import APNs
import Transport

/// The answer to a broadcast or channel-management request, before it is sent.
struct MockBroadcastAnswer {
    /// What the request asked for: the record's `kind`.
    enum Kind: String {
        case broadcast
        case create = "channel-create"
        case read = "channel-read"
        case delete = "channel-delete"
        case list = "channel-list"
        /// A path or method no endpoint takes.
        case other
    }

    var kind: Kind
    /// The HTTP status; 0 means the stream is refused (RST_STREAM REFUSED_STREAM) instead.
    var status: Int
    /// APNs' reason of an error answer.
    var reason: Reason?
    /// A `--respond-file` reason (any text), when the answer is scripted.
    var scriptedReason: String?
    /// The reason as the answer's body, the record and the counters spell it.
    var reasonText: String? { reason?.name ?? scriptedReason }
    /// The bundle id of the path (empty when the path named none).
    var bundleID: Substring = ""
    /// The request's `apns-channel-id`, or the id a create made (sent back in `apns-channel-id`):
    /// made on demand (a broadcast's answer needs it only for the record, a channel's state or a fault).
    var channelID: String? { createdChannelID ?? channelField.map { fields.value(at: $0) } }
    /// The id a create made.
    var createdChannelID: String?
    /// The request's fields and where its one `apns-channel-id` is among them.
    var fields = H2RequestHeaders()
    var channelField: Int?
    /// The request's `apns-request-id` when it had exactly one (echoed).
    var requestID: String?
    /// The request passed the authorization check (a connection's stream limit rises after the first).
    var passedAuthorization = false
    /// The signing key whose token verified (the record's `key_id`).
    var key: Int?
    /// A read's or a list's JSON.
    var body: [UInt8] = []

    init(kind: Kind, status: Int = 200) {
        self.kind = kind
        self.status = status
    }

    var isRefusal: Bool { status == 0 }

    mutating func refuse(_ reason: Reason) {
        status = reason.status
        self.reason = reason
    }
}
