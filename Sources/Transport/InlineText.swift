/// A short header value (an `apns-id` is 36 bytes) kept inline: copying and storing it allocates
/// nothing and touches no reference count, so a response can travel from nghttp2's callback to the
/// result log without a heap object. A value longer than `capacity` bytes (no APNs value is) is
/// kept whole in a `String` instead.
public struct InlineText: Sendable, Equatable, CustomStringConvertible {
    public static let capacity = 48

    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    /// The number of bytes held.
    public private(set) var count: Int = 0
    private var overflow: String?

    public init() {}

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        count = bytes.count
        guard bytes.count <= Self.capacity else {
            overflow = String(decoding: bytes, as: UTF8.self)
            return
        }
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        Swift.withUnsafeMutableBytes(of: &words) { storage in
            storage.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
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
        if var overflow {
            return try overflow.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
        return try Swift.withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    public var description: String {
        overflow ?? withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    public static func == (lhs: InlineText, rhs: InlineText) -> Bool {
        lhs.count == rhs.count && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
    }
}
