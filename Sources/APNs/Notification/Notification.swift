/// One push to send: a device token, a payload and the `apns-*` headers of docs/apns.md.
/// Values are typed but not proven valid (topic, sizes, ids can be anything): call
/// `validate(auth:)`, or build from text with `init(deviceTokenHex:payload:headers:auth:)`,
/// which does.
public struct Notification: Sendable, Hashable {
    /// The device to push to; its hex goes in the request path.
    public var deviceToken: DeviceToken
    /// The JSON body, sent as is.
    public var payload: [UInt8]
    /// `apns-topic`; nil sends no header (allowed with certificate auth only).
    public var topic: String?
    /// `apns-push-type`: decides the topic suffix and the payload size limit.
    public var pushType: PushType
    /// `apns-priority`: 10 at once, 5 power-friendly, 1 lowest.
    public var priority: Priority
    /// `apns-expiration` in epoch seconds; 0 = deliver once, do not store; nil sends no header.
    public var expiration: Int64?
    /// `apns-collapse-id`; nil sends no header.
    public var collapseID: String?
    /// `apns-id`, a canonical lowercase UUID; nil lets APNs make one up.
    public var apnsID: String?

    /// `priority` nil means `Priority.defaultPriority(for: pushType)` (5 for background, else 10).
    public init(deviceToken: DeviceToken, payload: [UInt8], topic: String? = nil,
                pushType: PushType = .alert, priority: Priority? = nil, expiration: Int64? = nil,
                collapseID: String? = nil, apnsID: String? = nil) {
        self.deviceToken = deviceToken
        self.payload = payload
        self.topic = topic
        self.pushType = pushType
        self.priority = priority ?? Priority.defaultPriority(for: pushType)
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }

    /// What APNs would reject in this notification, in APNs' order of checks, or nil when it
    /// would take it. Nothing is allocated unless there is a rejection to describe.
    public func validate(auth: AuthKind) -> Rejection? {
        if let rejection = validateHeaders(auth: auth) { return rejection }
        return Self.payloadRejection(payload, pushType: pushType)
    }

    /// `validate(auth:)` without the payload check.
    func validateHeaders(auth: AuthKind) -> Rejection? {
        if let reason = HeaderRules.checkTopic(topic, pushType: pushType, auth: auth) {
            return reason == .missingTopic
                ? Rejection(.missingTopic, "no topic; token authentication needs the app's bundle id as topic")
                : Rejection(.badTopic, Self.topicDetail(topic ?? "", pushType))
        }
        if !priority.isAllowed(for: pushType) {
            return Rejection(.badPriority, "push type background must use priority 5, not \(priority.rawValue)")
        }
        if let expiration, expiration < 0 {
            return Rejection(.badExpirationDate, "expiration \(expiration) is negative; use epoch seconds, or 0")
        }
        if let apnsID, HeaderRules.checkAPNsID(apnsID) != nil {
            return Rejection(.badMessageId, Self.apnsIDDetail(apnsID))
        }
        if let collapseID, HeaderRules.checkCollapseID(collapseID) != nil {
            return Rejection(.badCollapseId, Self.collapseIDDetail(collapseID))
        }
        return nil
    }

    /// What APNs would say of `payload` sent as `pushType`: PayloadEmpty, PayloadTooLarge,
    /// InvalidPayload, or nil.
    static func payloadRejection(_ payload: some Collection<UInt8>, pushType: PushType) -> Rejection? {
        guard let (reason, json) = HeaderRules.payloadProblem(payload, pushType: pushType) else { return nil }
        return Rejection(reason, payloadDetail(reason, json, payload.count, pushType))
    }

    static func topicDetail(_ topic: String, _ pushType: PushType) -> String {
        if let suffix = pushType.topicSuffix {
            return "topic \"\(topic)\" does not end with \"\(suffix)\", which push type \(pushType.rawValue) needs (bundle id + \"\(suffix)\"); topics are not rewritten"
        }
        let other = PushType.suffixOwner(of: topic).map { " (it ends like a \($0.rawValue) topic)" } ?? ""
        return "topic \"\(topic)\" does not suit push type \(pushType.rawValue)\(other); use the bare bundle id or set the matching push type"
    }

    static func apnsIDDetail(_ apnsID: String) -> String {
        "apns-id \"\(apnsID)\" is not a canonical lowercase UUID (8-4-4-4-12 hex digits, e.g. 123e4567-e89b-12d3-a456-426614174000)"
    }

    static func collapseIDDetail(_ collapseID: String) -> String {
        collapseID.isEmpty
            ? "collapse id is empty; omit it instead"
            : "collapse id is \(collapseID.utf8.count) bytes; at most \(Limits.collapseIDBytes) are allowed"
    }

    static func payloadDetail(_ reason: Reason, _ json: JSONError?, _ size: Int, _ pushType: PushType) -> String {
        switch reason {
        case .payloadEmpty: "payload is empty; give a JSON object such as {\"aps\":{\"alert\":\"hi\"}}"
        case .payloadTooLarge: "payload is \(size) bytes; push type \(pushType.rawValue) allows at most \(Limits.payloadBytes(for: pushType))"
        default: json?.description ?? "payload is not a JSON object"
        }
    }
}
