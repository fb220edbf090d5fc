/// A short header value (an `apns-id` is 36 bytes) kept inline: copying and storing it allocates
/// nothing and touches no reference count, so a response can travel from nghttp2's callback to the
/// result log without a heap object. A value longer than `capacity` bytes (no APNs value is) is
/// kept whole in a `String` instead.
public struct InlineText: Sendable, Equatable, CustomStringConvertible {
    /// Bytes held inline; a longer value goes to a `String`.
    public static let capacity = 48

    // Constants without default values, each initialized once: assigning over defaults (an
    // optional var starts as nil) made the initializer build the value in memory and copy it out.
    @usableFromInline let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    /// The number of bytes held.
    public let count: Int
    @usableFromInline let overflow: String?

    /// Empty text.
    public init() {
        words = (0, 0, 0, 0, 0, 0)
        count = 0
        overflow = nil
    }

    /// `bytes`, inline when they fit (the client session's copy of a captured response header).
    /// Inlinable: a call per answer showed in the profile (Transport makes one per response).
    @inlinable
    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        count = bytes.count
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        // `capacity`, spelled out: another module's read of the static is a call.
        guard bytes.count <= 48 else {
            self.words = words
            overflow = String(decoding: bytes, as: UTF8.self)
            return
        }
        if let source = bytes.baseAddress, bytes.count > 0 {
            Swift.withUnsafeMutableBytes(of: &words) { storage in
                storage.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
            }
        }
        self.words = words
        overflow = nil
    }

    /// `text`'s UTF-8 bytes, inline when they fit.
    public init(_ text: String) {
        var text = text
        self = text.withUTF8 { InlineText($0) }
    }

    /// No bytes held.
    public var isEmpty: Bool { count == 0 }

    /// The bytes when they fit (an APNs value always does), as a plain value; none otherwise.
    public var inlineBytes: InlineBytes { InlineBytes(words: words, count: overflow == nil ? count : 0) }

    /// The text when it is longer than `capacity` (held whole); nil otherwise.
    public var overflowText: String? { overflow }

    /// The text of `inlineBytes` or, when there is one, of `overflowText`.
    public init(_ bytes: InlineBytes, overflow: String?) {
        if let overflow {
            self.init(overflow)
        } else {
            self = bytes.withUnsafeBytes { InlineText($0.assumingMemoryBound(to: UInt8.self)) }
        }
    }

    /// Appends the bytes held to `out`.
    public func append(to out: inout [UInt8]) {
        withUnsafeBytes { out.append(contentsOf: $0) }
    }

    /// Calls `body` with the bytes held (valid only during the call).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if var overflow {
            return try overflow.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
        return try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// The bytes as a `String` (invalid UTF-8 repaired).
    public var description: String {
        overflow ?? withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The same bytes.
    public static func == (lhs: InlineText, rhs: InlineText) -> Bool {
        lhs.count == rhs.count && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }
}
