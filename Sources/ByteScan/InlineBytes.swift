/// Up to `InlineText.capacity` bytes held in the value itself: the part of an `InlineText` that
/// copies as plain memory (no call, no reference count), for a record that carries the text far
/// (the result record's apns-id) and keeps the rare longer value beside it
/// (`InlineText.overflowText`).
public struct InlineBytes: Sendable {
    fileprivate let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    /// The number of bytes held (0 for a text longer than `InlineText.capacity`, held elsewhere).
    public let count: Int

    init(words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64), count: Int) {
        self.words = words
        self.count = count
    }

    /// No bytes.
    public init() {
        self.init(words: (0, 0, 0, 0, 0, 0), count: 0)
    }

    /// Calls `body` with the bytes held (valid only during the call).
    @inlinable
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try Swift.withUnsafeBytes(of: self) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}
