import CNGHTTP2

/// One request header field, with how HPACK may remember it.
///
/// Apple asks (docs/apns.md, HPACK): `authorization` never indexed; `apns-id`, `apns-expiration`,
/// `apns-collapse-id` indexed on a connection's first request and never indexed afterwards (they
/// change per request, so indexing them only churns APNs' small dynamic table); everything else
/// indexed. `H2Header(name, value)` applies that rule from the name; `:path` is always sent never-indexed
/// by the session itself.
public struct H2Header: Sendable, Equatable {
    /// How HPACK may treat the field: Apple's guidance differs per header.
    public enum Indexing: Sendable, Equatable {
        /// Ordinary HPACK: the encoder may add it to the dynamic table.
        case indexed
        /// Literal never indexed (NGHTTP2_NV_FLAG_NO_INDEX), also for every intermediary.
        case neverIndexed
        /// `indexed` on the session's first request, `neverIndexed` on every later one.
        case indexedOnFirstRequestOnly
    }

    /// The lowercase field name.
    public var name: String
    /// The field value.
    public var value: String
    /// How HPACK may remember it.
    public var indexing: Indexing

    /// A header with Apple's indexing rule for `name` (lowercase, as HTTP/2 requires).
    public init(_ name: String, _ value: String) {
        self.init(name, value, indexing: Self.appleIndexing(for: name))
    }

    /// A header with an explicit indexing rule (tests, and headers Apple's rule does not cover).
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
    /// The field name as received (lowercase on HTTP/2).
    public var name: String
    /// The field value as received.
    public var value: String
    /// The sender encoded it as a literal never indexed (NGHTTP2_NV_FLAG_NO_INDEX on our side).
    public var neverIndexed: Bool

    /// A field, for tests and for callers that build headers to compare.
    public init(name: String, value: String, neverIndexed: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndexed = neverIndexed
    }
}
