/// What APNs answered one request, and what the sender must do about it.
public struct Response: Sendable, Hashable {
    /// The HTTP `:status`.
    public let status: Int
    /// The `apns-id` header APNs returned (ours, or the one it made up).
    public let apnsID: String?
    /// The reason string exactly as sent, also when `Reason` does not know it; nil on 200,
    /// and when the body was empty or not a JSON object.
    public let reasonText: String?
    /// `reasonText` when it is a known reason.
    public let reason: Reason?
    /// On a 410 only: when the token stopped being valid, in **milliseconds** since the epoch.
    public let timestamp: Int64?

    /// Decodes an answer's body. Never fails: a garbage, empty or cut body leaves the reason
    /// nil, and the status alone decides the disposition.
    public init(status: Int, apnsID: String?, body: some Collection<UInt8>) {
        let decoded = body.isEmpty ? nil : ErrorBody(decoding: body)
        self.init(status: status, apnsID: apnsID, reasonText: decoded?.reasonText,
                  timestamp: decoded?.timestamp)
    }

    /// An answer from its parts; `timestamp` is kept only on a 410.
    public init(status: Int, apnsID: String? = nil, reasonText: String?, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.reasonText = reasonText
        self.reason = reasonText.flatMap { Reason(name: $0) }
        self.timestamp = status == 410 ? timestamp : nil
    }

    /// What the sender does next: `Disposition(status:reason:)`.
    public var disposition: Disposition { Disposition(status: status, reason: reason) }

    /// The body APNs sends with an error: `{"reason":"X"}`, or with `"timestamp"` on a 410.
    public static func errorBody(_ reason: Reason, timestamp: Int64? = nil) -> [UInt8] {
        ErrorBody(reason: reason, timestamp: timestamp).encoded()
    }

    /// `errorBody` for a reason string `Reason` may not know (e.g. a fault injected by the mock).
    public static func errorBody(reasonText: String, timestamp: Int64? = nil) -> [UInt8] {
        ErrorBody(reasonText: reasonText, timestamp: timestamp).encoded()
    }
}
