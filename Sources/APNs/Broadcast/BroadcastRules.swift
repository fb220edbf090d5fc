/// Apple's rules for Live Activity broadcasts and channel management (iOS 18, docs/apns.md), one
/// check per header over the raw header text, as `HeaderRules` holds them for device pushes. The
/// mock applies them to each request; a sender may apply them to each row before sending. Each
/// returns the reason APNs answers, or nil when the value is acceptable; a nil value means the
/// header is absent. None of them allocates. The checks run per request (the mock) and per row
/// (`broadcast`), so those over text are `@inlinable`: specialized for the caller's `String` or
/// `Substring` they read its UTF-8 in place, where the generic form went through the protocol's
/// witnesses byte by byte (callgrind: about half the mock's instructions per broadcast).
public enum BroadcastRules {
    /// The request header naming the channel (broadcast, read, delete) and the response header
    /// carrying a new channel's id (create).
    public static let channelIDHeader = "apns-channel-id"
    /// The optional request id (a UUID), echoed in the answer; APNs makes one when absent.
    public static let requestIDHeader = "apns-request-id"
    /// The `apns-push-type` of a broadcast. Apple's pages write it three ways; all are accepted.
    public static let pushTypeSpellings = ["liveactivity", "Liveactivity", "LiveActivity"]
    /// The `push-type` of a channel, in a create body and a read answer.
    public static let channelPushType = "LiveActivity"
    /// Largest broadcast payload, in bytes.
    public static let payloadBytes = 5120
    /// Most channels an app may have in one environment.
    public static let maxChannelsPerApp = 10_000

    /// `apns-channel-id`: MissingChannelId when absent or empty, BadChannelId unless base64.
    @inlinable
    public static func checkChannelID(_ value: (some StringProtocol)?) -> Reason? {
        guard let value, !value.isEmpty else { return .missingChannelId }
        return isWellFormedChannelID(value) ? nil : .badChannelId
    }

    /// Whether `value` is base64 (RFC 4648's standard alphabet, padded to a multiple of 4
    /// characters): every channel id APNs hands out is, whatever its length.
    @inlinable
    public static func isWellFormedChannelID(_ value: some StringProtocol) -> Bool {
        if let verdict = value.utf8.withContiguousStorageIfAvailable({ isWellFormedChannelID(bytes: $0) }) { return verdict }
        return Array(value.utf8).withUnsafeBufferPointer { isWellFormedChannelID(bytes: $0) }
    }

    /// `isWellFormedChannelID` over UTF-8 bytes in place (a CSV field, a header value).
    public static func isWellFormedChannelID(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty, bytes.count % 4 == 0 else { return false }
        // Digits up to the padding, then at most two `=` to the end. A table look-up a byte: the
        // range tests were ~19 instructions a byte, paid by the sender and the mock for each
        // broadcast's channel id.
        return base64Digits.withUnsafeBufferPointer { isDigit in
            var index = 0
            while index < bytes.count, isDigit[Int(bytes[index])] { index += 1 }
            let digits = index
            while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
            return index == bytes.count && bytes.count - digits <= 2
        }
    }

    /// By byte value: whether it is one of base64's 64 digits.
    private static let base64Digits: [Bool] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }

    /// `apns-push-type` of a broadcast: MissingPushType when absent, InvalidPushType unless one of
    /// `pushTypeSpellings`.
    @inlinable
    public static func checkPushType(_ value: (some StringProtocol)?) -> Reason? {
        guard let value else { return .missingPushType }
        let utf8 = value.utf8
        // In place when contiguous (a header value is): the generic walk of the UTF-8 view was
        // ~550 instructions a broadcast in the mock.
        let known = utf8.withContiguousStorageIfAvailable { bytes in
            Self.pushTypeSpellingBytes.contains { $0.count == bytes.count && $0.elementsEqual(bytes) }
        } ?? Self.pushTypeSpellingBytes.contains { utf8.elementsEqual($0) }
        return known ? nil : .invalidPushType
    }

    @usableFromInline
    static let pushTypeSpellingBytes: [[UInt8]] = pushTypeSpellings.map { Array($0.utf8) }

    /// `apns-priority`: "10", "5" or "1"; absent means 10 (BadPriority otherwise).
    public static func checkPriority(_ value: String?) -> Reason? {
        HeaderRules.checkPriority(value, pushType: .liveactivity)
    }

    /// `apns-expiration`, required on a broadcast: BadExpirationDate when absent or not seconds.
    public static func checkExpiration(_ value: String?) -> Reason? {
        guard let value else { return .badExpirationDate }
        return HeaderRules.checkExpiration(value)
    }

    /// `apns-request-id`: a canonical lowercase UUID when present (BadMessageId).
    public static func checkRequestID(_ value: String?) -> Reason? {
        HeaderRules.checkAPNsID(value)
    }

    /// A broadcast body: PayloadEmpty, PayloadTooLarge over `payloadBytes`, BadRequestPayload
    /// when it is not one JSON object.
    public static func checkPayload(_ body: some Collection<UInt8>) -> Reason? {
        if body.isEmpty { return .payloadEmpty }
        if body.count > payloadBytes { return .payloadTooLarge }
        return JSONValidator.validate(body) == nil ? nil : .badRequestPayload
    }

    /// A bundle id in a broadcast or channel path (or a broadcast's `apns-topic`) that carries a
    /// push type's suffix (".push-type.liveactivity", ".voip", …): APNs answers TopicDisallowed.
    @inlinable
    public static func hasPushTypeSuffix(_ bundleID: some StringProtocol) -> Bool {
        if let found = bundleID.utf8.withContiguousStorageIfAvailable({ hasPushTypeSuffix(bytes: $0) }) { return found }
        return Array(bundleID.utf8).withUnsafeBufferPointer { hasPushTypeSuffix(bytes: $0) }
    }

    /// `hasPushTypeSuffix` over UTF-8 bytes in place.
    public static func hasPushTypeSuffix(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        pushTypeSuffixes.contains { suffix in
            bytes.count > suffix.count && suffix.withUnsafeBufferPointer { suffix in
                // By index over the two buffers: `elementsEqual` was ~550 instructions a broadcast in the mock.
                let start = bytes.count - suffix.count
                for index in 0..<suffix.count where bytes[start + index] != suffix[index] { return false }
                return true
            }
        }
    }

    private static let pushTypeSuffixes: [[UInt8]] = PushType.suffixed.map { Array($0.1.utf8) }
}
