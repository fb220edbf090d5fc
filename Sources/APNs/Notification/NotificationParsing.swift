/// A notification's optional header values as text, e.g. a CSV row's `topic`, `push_type`,
/// `priority`, `expiration`, `collapse_id` and `apns_id` columns (already merged with the run's
/// defaults). For `Notification.init(deviceTokenHex:payload:headers:auth:)` nil and "" both mean
/// "not given", as an empty CSV field does.
public struct HeaderValues: Sendable, Hashable {
    /// The `topic` column (`apns-topic`); nil or "" for none.
    public var topic: String?
    /// The `push_type` column (`apns-push-type`); nil or "" for `alert`.
    public var pushType: String?
    /// The `priority` column (`apns-priority`); nil or "" for 10.
    public var priority: String?
    /// The `expiration` column, epoch seconds (`apns-expiration`); nil or "" for none.
    public var expiration: String?
    /// The `collapse_id` column (`apns-collapse-id`); nil or "" for none.
    public var collapseID: String?
    /// The `apns_id` column, a UUID (`apns-id`); nil or "" to let APNs choose.
    public var apnsID: String?

    /// Values as text; every one may be left out (nil), as a CSV row may leave its field empty.
    public init(topic: String? = nil, pushType: String? = nil, priority: String? = nil,
                expiration: String? = nil, collapseID: String? = nil, apnsID: String? = nil) {
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }
}

extension Notification {
    /// Builds a notification from text and validates it (`validate(auth:)`), throwing the
    /// reason APNs would answer, with a detail naming the value:
    /// BadDeviceToken, then, in APNs' order, MissingTopic/BadTopic, InvalidPushType, BadPriority,
    /// BadExpirationDate, BadMessageId, BadCollapseId, PayloadEmpty/PayloadTooLarge/InvalidPayload.
    /// A push type not given is `alert`; a priority not given is 5 for background, else 10.
    public init(deviceTokenHex: some StringProtocol, payload: [UInt8], headers: HeaderValues,
                auth: AuthKind) throws(Rejection) {
        let token: DeviceToken
        do {
            token = try DeviceToken(hex: deviceTokenHex)
        } catch {
            throw Rejection(.badDeviceToken, error.description)
        }
        let parsed = try NotificationHeaders(parsing: headers, auth: auth)
        self.init(deviceToken: token, payload: payload, topic: parsed.topic, pushType: parsed.pushType,
                  priority: parsed.priority, expiration: parsed.expiration,
                  collapseID: parsed.collapseID, apnsID: parsed.apnsID)
        if let rejection = parsed.payloadRejection(payload) { throw rejection }
    }

    static let pushTypeNames = PushType.allCases.map(\.rawValue).joined(separator: ", ")
}

/// A notification's `apns-*` values parsed from text and checked in APNs' order, without the device
/// token and the payload: a bulk sender checks its run-level values once, and a row's own values only
/// for the rows that have some (`Notification.init(deviceTokenHex:payload:headers:auth:)` is this,
/// plus the token before and the payload after).
public struct NotificationHeaders: Sendable, Hashable {
    /// `apns-topic`, checked against the push type's suffix; nil sends none (certificate auth).
    public var topic: String?
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-priority`, checked against the push type.
    public var priority: Priority
    /// `apns-expiration`, epoch seconds; nil sends none.
    public var expiration: Int64?
    /// `apns-collapse-id`, at most 64 bytes; nil sends none.
    public var collapseID: String?
    /// `apns-id`, a canonical UUID; nil lets APNs choose one.
    public var apnsID: String?

    /// Throws what APNs would answer: MissingTopic/BadTopic, InvalidPushType, BadPriority,
    /// BadExpirationDate, BadMessageId, BadCollapseId, in that order.
    public init(parsing headers: HeaderValues, auth: AuthKind) throws(Rejection) {
        let topic = given(headers.topic)
        let pushTypeText = given(headers.pushType)
        let pushType = pushTypeText.map { PushType(headerValue: $0) } ?? .alert
        // APNs checks the topic before the push type; with an unknown push type, only presence.
        if let reason = HeaderRules.checkTopic(topic, pushType: pushType, auth: auth) {
            throw reason == .missingTopic
                ? Rejection(.missingTopic, "no topic; token authentication needs the app's bundle id as topic")
                : Rejection(.badTopic, Notification.topicDetail(topic ?? "", pushType ?? .alert))
        }
        guard let pushType else {
            throw Rejection(.invalidPushType,
                            "push type \"\(pushTypeText ?? "")\" is not one of \(Notification.pushTypeNames)")
        }
        var priority: Priority?
        if let text = given(headers.priority) {
            priority = Priority(headerValue: text)
            if priority == nil { throw Rejection(.badPriority, "priority \"\(text)\" is not 10, 5 or 1") }
        }
        if let priority, !priority.isAllowed(for: pushType) {
            throw Rejection(.badPriority, "push type background must use priority 5, not \(priority.rawValue)")
        }
        var expiration: Int64?
        if let text = given(headers.expiration) {
            expiration = HeaderRules.expirationSeconds(text)
            if expiration == nil {
                throw Rejection(.badExpirationDate, "expiration \"\(text)\" is not epoch seconds (digits only; 0 = do not store)")
            }
        }
        let checked = Notification(deviceToken: Self.placeholderToken, payload: [], topic: topic, pushType: pushType,
                                   priority: priority, expiration: expiration,
                                   collapseID: given(headers.collapseID), apnsID: given(headers.apnsID))
        if let rejection = checked.validateHeaders(auth: auth) { throw rejection }
        self.topic = checked.topic
        self.pushType = checked.pushType
        self.priority = checked.priority
        self.expiration = checked.expiration
        self.collapseID = checked.collapseID
        self.apnsID = checked.apnsID
    }

    /// What APNs would say of `payload` sent with these headers: PayloadEmpty, PayloadTooLarge,
    /// InvalidPayload (with a detail naming the JSON error), or nil.
    public func payloadRejection(_ payload: [UInt8]) -> Rejection? {
        Notification.payloadRejection(payload, pushType: pushType)
    }

    /// `payloadRejection(_:)` for a slice of a larger buffer (a CSV batch's field), without a copy.
    public func payloadRejection(_ payload: ArraySlice<UInt8>) -> Rejection? {
        Notification.payloadRejection(payload, pushType: pushType)
    }

    /// `payloadRejection(_:)` for a push type alone (no copy of the header values).
    public static func payloadRejection(_ payload: ArraySlice<UInt8>, pushType: PushType) -> Rejection? {
        Notification.payloadRejection(payload, pushType: pushType)
    }

    /// `payloadRejection(_:pushType:)` for the bytes at `range` of `bytes` (a CSV batch's storage),
    /// borrowed: a slice would retain the buffer.
    public static func payloadRejection(_ bytes: borrowing [UInt8], in range: Range<Int>, pushType: PushType) -> Rejection? {
        bytes.withUnsafeBufferPointer { Notification.payloadRejection(UnsafeBufferPointer(rebasing: $0[range]), pushType: pushType) }
    }

    /// `payloadRejection(_:in:pushType:)` for a `liveactivity` payload, which reads its `aps` for
    /// ActivityKit's rules in the same pass (`LiveActivityScan`, no second walk): the rejection, or
    /// nil with `liveActivity` set to the payload as `LiveActivityPayload(buffer:)` reads it.
    public static func payloadRejection(_ bytes: borrowing [UInt8], in range: Range<Int>,
                                        liveActivity: inout LiveActivityPayload?) -> Rejection? {
        bytes.withUnsafeBufferPointer { all in
            let payload = UnsafeBufferPointer(rebasing: all[range])
            // A rejected payload (rare) is checked again for its detail, by the path every push type takes.
            guard !payload.isEmpty && payload.count <= Limits.payloadBytes(for: .liveactivity),
                  let read = LiveActivityPayload(validating: payload) else {
                return Notification.payloadRejection(payload, pushType: .liveactivity)
            }
            liveActivity = read
            return nil
        }
    }

    /// The header fields a request with these values carries (besides `authorization`), in the order
    /// APNs documents them; `apns-priority` always (an absent one means 10, even for background).
    public var fields: [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        if let topic { fields.append(("apns-topic", topic)) }
        fields.append(("apns-push-type", pushType.headerValue))
        fields.append(("apns-priority", priority.headerValue))
        if let expiration { fields.append(("apns-expiration", String(expiration))) }
        if let collapseID { fields.append(("apns-collapse-id", collapseID)) }
        if let apnsID { fields.append(("apns-id", apnsID)) }
        return fields
    }

    // `validateHeaders` never looks at the token.
    private static let placeholderToken = try! DeviceToken(bytes: [0])
}

private func given(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
}
