/// The names of the never-indexed fields a server session's answers carry that it already put in
/// HPACK's dynamic table, by sending the connection's first answer with such a field indexed.
///
/// nghttp2 looks a never-indexed field's name up in the dynamic table: once the name is there,
/// later answers refer to it by index (one byte) and only their values are literals, never indexed.
/// Without it every answer's `apns-id` (`apns-request-id`, `apns-unique-id`) name was a literal,
/// Huffman-coded by the server and decoded by the client each time. The first value is indexed
/// with its name (HPACK has no name-only entry); the mock's ids are random, so it never recurs.
struct H2IndexedNames {
    private var names: [[UInt8]] = []
    /// Distinct names indexed at most; past it the others stay literals (the table stays small).
    static let limit = 8

    /// Whether a field named `name`, to be sent never indexed, goes out indexed instead: the first
    /// time the connection sends the name (and then remembers it), while fewer than `limit` are.
    mutating func indexesFirst(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = name.baseAddress else { return false }
        for kept in names where kept.withUnsafeBufferPointer({ H2Wire.equals(base, name.count, $0.baseAddress!, $0.count) }) {
            return false
        }
        guard names.count < Self.limit else { return false }
        names.append(Array(name))
        return true
    }
}
