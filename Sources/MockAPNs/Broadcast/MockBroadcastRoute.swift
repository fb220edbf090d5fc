import Glibc

/// Which of the broadcast and channel-management endpoints a request's `:path` names
/// (docs/apns.md, "Live Activity broadcast and channel management").
enum MockBroadcastRoute: Equatable {
    /// `/4/broadcasts/apps/<bundle id>`.
    case broadcast(bundleID: Substring)
    /// `/1/apps/<bundle id>/channels`: create (POST), read (GET), delete (DELETE).
    case channels(bundleID: Substring)
    /// `/1/apps/<bundle id>/all-channels`: list (GET).
    case allChannels(bundleID: Substring)
    /// Anything else: 404 BadPath.
    case badPath

    init(path: String) {
        if let bundleID = Self.rest(of: path, after: "/4/broadcasts/apps/"), Self.isBundleID(bundleID) {
            self = .broadcast(bundleID: bundleID)
        } else if let rest = Self.rest(of: path, after: "/1/apps/"), let slash = rest.lastIndex(of: "/") {
            let bundleID = rest[..<slash]
            let resource = rest[rest.index(after: slash)...]
            guard Self.isBundleID(bundleID) else {
                self = .badPath
                return
            }
            switch resource {
            case "channels": self = .channels(bundleID: bundleID)
            case "all-channels": self = .allChannels(bundleID: bundleID)
            default: self = .badPath
            }
        } else {
            self = .badPath
        }
    }

    /// Whether `path` is one a push listener hands to the broadcast side (`/4/…`, `/1/…`): every
    /// other path goes through the device-push checks. Two bytes compared, no `String` made.
    static func isBroadcastOrChannelPath(_ path: String) -> Bool {
        var bytes = path.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "/"), let digit = bytes.next() else { return false }
        return (digit == UInt8(ascii: "4") || digit == UInt8(ascii: "1")) && bytes.next() == UInt8(ascii: "/")
    }

    var bundleID: Substring? {
        switch self {
        case .broadcast(let id), .channels(let id), .allChannels(let id): id
        case .badPath: nil
        }
    }

    /// The methods the endpoint takes (405 MethodNotAllowed for others).
    func allows(method: String) -> Bool {
        switch self {
        case .broadcast: method == "POST"
        case .channels: method == "POST" || method == "GET" || method == "DELETE"
        case .allChannels: method == "GET"
        case .badPath: true
        }
    }

    /// `path` after `prefix`, compared and cut as UTF-8 (an index offset in the UTF-8 view of a
    /// native string is a step, where the `Character` view walks every character).
    /// In place with `memcmp` when the string is contiguous (a header value is): the generic walk
    /// of the UTF-8 view was ~750 instructions a broadcast, `starts(with:)` over two buffers still
    /// ~100 samples of perf's 8,600 per 300k broadcasts (its iterators).
    private static func rest(of path: String, after prefix: StaticString) -> Substring? {
        let utf8 = path.utf8
        let count = prefix.utf8CodeUnitCount
        let matches = utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress, bytes.count >= count else { return false }
            return memcmp(base, prefix.utf8Start, count) == 0
        } ?? prefix.withUTF8Buffer { utf8.starts(with: $0) }
        return matches ? Substring(utf8.dropFirst(count)) : nil
    }

    /// Bytes compared: `contains` with a string argument is Foundation's search (CFString), which
    /// was a sixth of the mock's instructions per broadcast; in place when contiguous (the generic
    /// walk of a substring's UTF-8 view was ~650 instructions).
    private static func isBundleID(_ text: Substring) -> Bool {
        var text = text
        // `withUTF8`: a substring's `utf8.withContiguousStorageIfAvailable` is the generic slice's.
        return text.withUTF8 { bytes in
            !bytes.isEmpty && !bytes.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
        }
    }
}
