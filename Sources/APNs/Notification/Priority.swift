/// `apns-priority`: how urgently APNs should deliver.
public enum Priority: Int, Sendable, Hashable, CaseIterable {
    /// 10: send immediately (APNs' default when the header is absent).
    case immediate = 10
    /// 5: send at a time that takes the device's power into account. Required for `background`.
    case powerConsidered = 5
    /// 1: prioritise the device's power over everything else.
    case low = 1

    /// The header's text: "10", "5" or "1".
    public var headerValue: String {
        switch self {
        case .immediate: "10"
        case .powerConsidered: "5"
        case .low: "1"
        }
    }

    /// Parses a header value; only the exact texts "10", "5" and "1" are priorities.
    public init?(headerValue: some StringProtocol) {
        var utf8 = headerValue.utf8.makeIterator()
        switch (utf8.next(), utf8.next(), utf8.next()) {
        case (UInt8(ascii: "1"), UInt8(ascii: "0"), nil): self = .immediate
        case (UInt8(ascii: "5"), nil, _): self = .powerConsidered
        case (UInt8(ascii: "1"), nil, _): self = .low
        default: return nil
        }
    }

    /// The priority to send when none is given: 5 for `background` (APNs rejects it at 10),
    /// 10 otherwise. APNs itself assumes 10 when the header is absent, so a sender always
    /// sends the header.
    public static func defaultPriority(for pushType: PushType) -> Priority {
        pushType == .background ? .powerConsidered : .immediate
    }

    /// Whether APNs accepts this priority for the push type: `background` takes only 5.
    public func isAllowed(for pushType: PushType) -> Bool {
        pushType != .background || self == .powerConsidered
    }
}
