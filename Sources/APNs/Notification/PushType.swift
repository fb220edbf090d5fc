#if canImport(Glibc)
import Glibc
#endif

/// `apns-push-type`: what kind of notification this is. Each kind, but `alert`, `background`
/// and `mdm`, is sent to the app's bundle id plus a fixed suffix (docs/apns.md's request table).
public enum PushType: String, Sendable, Hashable, CaseIterable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// The header's text, e.g. "liveactivity".
    public var headerValue: String { rawValue }

    /// Parses a header value: exactly one of the eleven names, lowercase, nothing around it.
    public init?(headerValue: some StringProtocol) {
        guard let found = Self.all.first(where: { $0.rawValue.utf8.elementsEqual(headerValue.utf8) })
        else { return nil }
        self = found
    }

    /// The suffix the topic must end with, e.g. ".voip"; nil for `alert`, `background`
    /// (the bare bundle id) and `mdm` (whose topic is whatever the MDM certificate names).
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: nil
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// Whether `topic` is a topic this push type can be sent to, judged by its suffix alone:
    /// - `mdm`: any non-empty topic;
    /// - a push type with a suffix: the topic is a bundle id followed by that suffix;
    /// - `alert`/`background`: the topic carries none of the suffixes (a topic ending in
    ///   ".voip" sent as `alert` is a mistake in the row, not a bundle id).
    /// Topics are never rewritten; a topic this rejects is `BadTopic`.
    public func accepts(topic: some StringProtocol) -> Bool {
        if topic.utf8.isEmpty { return false }
        if self == .mdm { return true }
        guard let owner = Self.suffixOwner(of: topic) else { return topicSuffix == nil }
        guard owner == self, let suffix = topicSuffix else { return false }
        return topic.utf8.count > suffix.utf8.count
    }

    /// The push type whose suffix `topic` ends with, if any. No suffix is the end of another
    /// (".voip" vs ".voip-ptt"), so at most one matches. Read per row (twice when rows carry a
    /// topic): a topic's last byte rules out most suffixes before any comparison, and the bytes
    /// are compared in place.
    static func suffixOwner(of topic: some StringProtocol) -> PushType? {
        topic.utf8.withContiguousStorageIfAvailable(suffixOwner(ofBytes:))
            ?? Array(topic.utf8).withUnsafeBufferPointer(suffixOwner(ofBytes:))
    }

    static func suffixOwner(ofBytes text: UnsafeBufferPointer<UInt8>) -> PushType? {
        guard let last = text.last else { return nil }
        for entry in suffixBytes where entry.last == last && bytes(text, endWith: entry.bytes) { return entry.type }
        return nil
    }

    private static func bytes(_ text: UnsafeBufferPointer<UInt8>, endWith suffix: [UInt8]) -> Bool {
        suffix.withUnsafeBufferPointer { suffix in
            guard text.count >= suffix.count, let start = text.baseAddress, let wanted = suffix.baseAddress else { return false }
            return memcmp(start + (text.count - suffix.count), wanted, suffix.count) == 0
        }
    }

    // Built once: the synthesized `allCases` makes a new array on every call, and these are
    // read per row.
    static let all: [PushType] = allCases
    static let suffixed: [(PushType, String)] = allCases.compactMap { type in
        type.topicSuffix.map { (type, $0) }
    }
    private static let suffixBytes: [(type: PushType, bytes: [UInt8], last: UInt8)] = suffixed.map { type, suffix in
        (type, Array(suffix.utf8), suffix.utf8.last ?? 0)
    }
}
