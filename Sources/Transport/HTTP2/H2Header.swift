import CNGHTTP2

/// One request header field, with how HPACK may remember it.
///
/// The caller sets each field's `Indexing`, as its server asks (an APNs client passes Apple's
/// guidance, `IndexingRules`); `H2Header(name, value)` is plain HPACK, `indexed`. `:path` is always
/// sent never-indexed by the session itself.
public struct H2Header: Sendable, Equatable {
    /// How HPACK may treat the field.
    public enum Indexing: Sendable, Equatable {
        /// Ordinary HPACK: the encoder may add it to the dynamic table.
        case indexed
        /// Literal never indexed (NGHTTP2_NV_FLAG_NO_INDEX), also for every intermediary.
        case neverIndexed
        /// `indexed` on the session's first request, `neverIndexed` on every later one.
        case indexedOnFirstRequestOnly
    }

    /// A server's indexing rule for request header names: the names it wants never indexed, those
    /// it wants indexed on a connection's first request only; every other name indexed.
    public struct IndexingRules: Sendable {
        /// Names never indexed (lowercase).
        public let neverIndexed: [String]
        /// Names indexed on the first request only (lowercase).
        public let indexedOnFirstRequestOnly: [String]

        /// The rule of these lists.
        public init(neverIndexed: [String], indexedOnFirstRequestOnly: [String]) {
            self.neverIndexed = neverIndexed
            self.indexedOnFirstRequestOnly = indexedOnFirstRequestOnly
        }

        /// The indexing for a field named `name`.
        public func indexing(for name: String) -> Indexing {
            if neverIndexed.contains(name) { return .neverIndexed }
            if indexedOnFirstRequestOnly.contains(name) { return .indexedOnFirstRequestOnly }
            return .indexed
        }
    }

    /// The lowercase field name.
    public var name: String
    /// The field value.
    public var value: String
    /// How HPACK may remember it.
    public var indexing: Indexing

    /// A field HPACK may index (`indexed`).
    public init(_ name: String, _ value: String) {
        self.init(name, value, indexing: .indexed)
    }

    /// A field with the indexing `rules` give its name.
    public init(_ name: String, _ value: String, rules: IndexingRules) {
        self.init(name, value, indexing: rules.indexing(for: name))
    }

    /// A field with an explicit indexing.
    public init(_ name: String, _ value: String, indexing: Indexing) {
        self.name = name
        self.value = value
        self.indexing = indexing
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
