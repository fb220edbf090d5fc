/// A short header value (an `apns-id` is 36 bytes) kept inline: copying and storing it allocates
/// nothing and touches no reference count, so a response can travel from nghttp2's callback to the
/// result log without a heap object. Values longer than `capacity` bytes keep their first
/// `capacity` bytes and say so with `isTruncated` (APNs' values never come near it).
public struct InlineText: Sendable, Equatable, CustomStringConvertible {
    public static let capacity = 48

    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    /// The number of bytes held.
    public private(set) var count: Int = 0
    /// The value given was longer than `capacity` bytes and was cut there.
    public private(set) var isTruncated = false

    public init() {}

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        let kept = min(bytes.count, Self.capacity)
        count = kept
        isTruncated = bytes.count > kept
        guard kept > 0, let source = bytes.baseAddress else { return }
        withUnsafeMutableBytes(of: &words) { storage in
            storage.baseAddress!.copyMemory(from: source, byteCount: kept)
        }
    }

    public init(_ text: String) {
        var text = text
        self = text.withUTF8 { InlineText($0) }
    }

    public var isEmpty: Bool { count == 0 }

    /// Appends the bytes held to `out`.
    public func append(to out: inout [UInt8]) {
        withUnsafeBytes { out.append(contentsOf: $0) }
    }

    /// Calls `body` with the bytes held (valid only during the call).
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    public var description: String {
        withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    public static func == (lhs: InlineText, rhs: InlineText) -> Bool {
        lhs.count == rhs.count && lhs.isTruncated == rhs.isTruncated
            && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }
}
