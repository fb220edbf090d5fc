/// APNs' request rules, one check per header, over the raw header text. The sender runs them on
/// each row (`Notification.validate`), the mock APNs server on each request, in docs/apns.md's order:
/// `checkPath` → `checkTopic` → `checkPushType` → `checkPriority` → `checkExpiration` →
/// `checkAPNsID` → `checkCollapseID` → `checkPayload`. Each returns the reason APNs answers, or
/// nil when the header is acceptable. A nil header value means the header is absent; a present
/// but empty value is checked like any other text (and is wrong everywhere it is checked).
/// None of them allocates.
public enum HeaderRules {
    /// The device token part of `/3/device/<token>` (split on bytes, not characters), or nil
    /// when the path is not of that shape.
    public static func deviceTokenHex(inPath path: String) -> Substring? {
        let prefix = "/3/device/".utf8
        guard path.utf8.starts(with: prefix) else { return nil }
        return Substring(path.utf8.dropFirst(prefix.count))
    }

    /// `:path`: 404 BadPath unless `/3/device/…`; then the device token must be there
    /// (MissingDeviceToken) and be one (BadDeviceToken).
    public static func checkPath(_ path: String) -> Reason? {
        guard let hex = deviceTokenHex(inPath: path) else { return .badPath }
        if hex.isEmpty { return .missingDeviceToken }
        return checkDeviceToken(hex)
    }

    /// A device token's hex text: BadDeviceToken unless `DeviceToken.check(hex:)` accepts it.
    public static func checkDeviceToken(_ hex: some StringProtocol) -> Reason? {
        DeviceToken.check(hex: hex) == nil ? nil : .badDeviceToken
    }

    /// `apns-topic`, as the sender sees it: required with token auth (MissingTopic), optional
    /// with a certificate; when present it must suit the push type (`PushType.accepts(topic:)`,
    /// else BadTopic). `pushType` nil means the push type is unknown: then only presence is
    /// checked, and `checkPushType` reports the push type.
    public static func checkTopic(_ topic: String?, pushType: PushType?, auth: AuthKind) -> Reason? {
        guard let topic, !topic.isEmpty else { return auth == .token ? .missingTopic : nil }
        guard let pushType else { return nil }
        return pushType.accepts(topic: topic) ? nil : .badTopic
    }

    /// `apns-topic`, as a server that serves the apps `allowedBundleIDs` sees it:
    /// - absent or empty: MissingTopic;
    /// - not one of the bundle ids, nor one of them followed by a push type's suffix
    ///   (".voip", ".push-type.widgets", …): TopicDisallowed;
    /// - allowed, but not suited to the push type (e.g. "com.example.voip" sent as `alert`, or
    ///   the bare bundle id sent as `voip`): BadTopic. For `mdm` the topic must be one of the ids.
    /// `pushType` nil (unknown) checks only that the topic is allowed. An empty set allows no
    /// topic: a server that names no bundle ids should use `checkTopic(_:pushType:auth:)`.
    public static func checkTopic(_ topic: String?, pushType: PushType?,
                                  allowedBundleIDs: Set<String>) -> Reason? {
        guard let topic, !topic.isEmpty else { return .missingTopic }
        if pushType == .mdm { return allowedBundleIDs.contains(topic) ? nil : .topicDisallowed }
        guard isAllowed(topic, allowedBundleIDs) else { return .topicDisallowed }
        guard let pushType else { return nil }
        return pushType.accepts(topic: topic) ? nil : .badTopic
    }

    static func isAllowed(_ topic: String, _ allowedBundleIDs: Set<String>) -> Bool {
        if allowedBundleIDs.contains(topic) { return true }
        for bundleID in allowedBundleIDs where topic.utf8.starts(with: bundleID.utf8) {
            let rest = topic.utf8.dropFirst(bundleID.utf8.count)
            for (_, suffix) in PushType.suffixed where rest.elementsEqual(suffix.utf8) { return true }
        }
        return false
    }

    /// `apns-push-type`: absent is accepted (APNs infers it; this project then means `alert`),
    /// otherwise it must be one of the eleven names (InvalidPushType).
    public static func checkPushType(_ value: String?) -> Reason? {
        guard let value else { return nil }
        return PushType(headerValue: value) == nil ? .invalidPushType : nil
    }

    /// `apns-priority`: "10", "5" or "1" (BadPriority), and `background` only at 5. Absent means
    /// 10, as at APNs, so a `background` push without the header is BadPriority.
    public static func checkPriority(_ value: String?, pushType: PushType) -> Reason? {
        let priority = value.map { Priority(headerValue: $0) } ?? .immediate
        guard let priority, priority.isAllowed(for: pushType) else { return .badPriority }
        return nil
    }

    /// `apns-expiration`: epoch seconds, decimal digits only (no sign, no spaces), at most
    /// `Int64.max`; 0 means deliver once and do not store. Else BadExpirationDate.
    public static func checkExpiration(_ value: String?) -> Reason? {
        guard let value else { return nil }
        return expirationSeconds(value) == nil ? .badExpirationDate : nil
    }

    /// The seconds in an `apns-expiration` value, or nil when it is not one.
    public static func expirationSeconds(_ value: some StringProtocol) -> Int64? {
        var seconds: Int64 = 0
        var digits = 0
        for byte in value.utf8 {
            guard let digit = decimalValue(byte) else { return nil }
            let (times10, overflow1) = seconds.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit))
            if overflow1 || overflow2 { return nil }
            seconds = sum
            digits += 1
        }
        return digits == 0 ? nil : seconds
    }

    /// `apns-id`: a canonical UUID, lowercase hex in groups 8-4-4-4-12 (BadMessageId).
    /// Uppercase is refused: Apple defines the header as lowercase, and a row that APNs might
    /// refuse is better rejected here than sent.
    public static func checkAPNsID(_ value: String?) -> Reason? {
        guard let value else { return nil }
        return isCanonicalUUID(value) ? nil : .badMessageId
    }

    /// Whether `value` is `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex.
    public static func isCanonicalUUID(_ value: some StringProtocol) -> Bool {
        var index = 0
        for byte in value.utf8 {
            switch index {
            case 8, 13, 18, 23:
                if byte != UInt8(ascii: "-") { return false }
            default:
                let lowercaseHex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                if !lowercaseHex { return false }
            }
            index += 1
        }
        return index == 36
    }

    /// `apns-collapse-id`: 1 to `Limits.collapseIDBytes` UTF-8 bytes (BadCollapseId).
    public static func checkCollapseID(_ value: String?) -> Reason? {
        guard let value else { return nil }
        let bytes = value.utf8.count
        return bytes == 0 || bytes > Limits.collapseIDBytes ? .badCollapseId : nil
    }

    /// The body: PayloadEmpty, PayloadTooLarge (over `Limits.payloadBytes(for:)`), or
    /// InvalidPayload when it is not one JSON object (`JSONValidator`).
    public static func checkPayload(_ body: some Collection<UInt8>, pushType: PushType) -> Reason? {
        payloadProblem(body, pushType: pushType)?.reason
    }

    /// `checkPayload`'s reason, with the JSON error when that is the problem.
    static func payloadProblem(_ body: some Collection<UInt8>,
                               pushType: PushType) -> (reason: Reason, json: JSONError?)? {
        if body.isEmpty { return (.payloadEmpty, nil) }
        if body.count > Limits.payloadBytes(for: pushType) { return (.payloadTooLarge, nil) }
        if let error = JSONValidator.validate(body) { return (.invalidPayload, error) }
        return nil
    }
}
