import CNGHTTP2

/// One request header field, with how HPACK may remember it.
///
/// Apple asks (APNS.md, HPACK): `authorization` never indexed; `apns-id`, `apns-expiration`,
/// `apns-collapse-id` indexed on a connection's first request and never indexed afterwards (they
/// change per request, so indexing them only churns APNs' small dynamic table); everything else
/// indexed. `H2Header(name, value)` applies that rule from the name; `:path` is always sent never-indexed
/// by the session itself.
public struct H2Header: Sendable, Equatable {
    public enum Indexing: Sendable, Equatable {
        /// Ordinary HPACK: the encoder may add it to the dynamic table.
        case indexed
        /// Literal never indexed (NGHTTP2_NV_FLAG_NO_INDEX), also for every intermediary.
        case neverIndexed
        /// `indexed` on the session's first request, `neverIndexed` on every later one.
        case indexedOnFirstRequestOnly
    }

    public var name: String
    public var value: String
    public var indexing: Indexing

    /// A header with Apple's indexing rule for `name` (lowercase, as HTTP/2 requires).
    public init(_ name: String, _ value: String) {
        self.init(name, value, indexing: Self.appleIndexing(for: name))
    }

    public init(_ name: String, _ value: String, indexing: Indexing) {
        self.name = name
        self.value = value
        self.indexing = indexing
    }

    /// Apple's HPACK guidance for a request header name.
    public static func appleIndexing(for name: String) -> Indexing {
        switch name {
        case "authorization": .neverIndexed
        case "apns-id", "apns-expiration", "apns-collapse-id": .indexedOnFirstRequestOnly
        default: .indexed
        }
    }
}

/// A header field as received by a server session, with whether the peer marked it never-indexed.
public struct H2Field: Sendable, Equatable {
    public var name: String
    public var value: String
    /// The sender encoded it as a literal never indexed (NGHTTP2_NV_FLAG_NO_INDEX on our side).
    public var neverIndexed: Bool

    public init(name: String, value: String, neverIndexed: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndexed = neverIndexed
    }
}
