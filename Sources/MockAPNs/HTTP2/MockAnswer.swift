/// The answer to one request, before it is sent.
public struct MockAnswer: Sendable, Equatable {
    /// The HTTP status; 0 means the stream is refused (RST_STREAM REFUSED_STREAM) instead.
    public var status: Int
    /// The reason string of an error answer (APNs' name, or a scripted one).
    public var reason: String?
    /// The 410 timestamp, ms since 1970.
    public var timestamp: Int64?
    /// The device token's hex as it appeared in the path (empty when the path had none).
    public var deviceToken: Substring
    /// The request passed the authorization check (a connection's stream limit rises after the first).
    public var passedAuthorization: Bool
    /// The request's `apns-id` header, when it had exactly one (echoed in the answer).
    public var apnsID: String?
    /// The signing key (an index in the server's keys) whose token the request carried, when it
    /// verified: what `--record-out`'s `key_id` names.
    public var key: Int?

    /// The stream is refused (status 0) rather than answered.
    public var isRefusal: Bool { status == 0 }
}
