import ByteScan
/// Checks that bytes are one JSON object (RFC 8259) and nothing else, as APNs wants its payload.
///
/// One pass over the bytes, no allocation: the nesting stack is a fixed `Limits.jsonDepth`
/// entries on the call stack. It checks the whole grammar, not braces: strings and their escapes,
/// UTF-8 (no overlongs, no UTF-8-encoded surrogates, nothing over U+10FFFF, no cut sequences),
/// numbers (no leading zeros, `+`, `.5`, `1.`), the literals, whitespace, and no trailing bytes.
///
/// Decisions where RFC 8259 leaves room:
/// - Lone surrogate escapes (`"\uD800"` without its low half, or a low half alone) are
///   rejected: the grammar allows them, but they name no character, and a device decoding
///   the payload may drop the notification.
/// - A byte order mark is rejected (RFC 8259 §8.1: senders must not add one).
/// - Nesting deeper than `Limits.jsonDepth` (the top-level object counts) is rejected.
public enum JSONValidator {
    /// Why `bytes` is not a JSON object, or nil when it is one.
    public static func validate(_ bytes: some Collection<UInt8>) -> JSONError? {
        if let result = bytes.withContiguousStorageIfAvailable({ validate(buffer: $0) }) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer { validate(buffer: $0) }
    }

    /// Whether `bytes` is exactly one JSON object.
    public static func isJSONObject(_ bytes: some Collection<UInt8>) -> Bool {
        validate(bytes) == nil
    }

    static func validate(buffer: UnsafeBufferPointer<UInt8>) -> JSONError? {
        validate(buffer: buffer, using: NativeBlocks.self)
    }

    /// `validate(buffer:)` with the given block tests (the tests run both kinds).
    static func validate<Blocks: ByteBlocks>(buffer: UnsafeBufferPointer<UInt8>, using _: Blocks.Type) -> JSONError? {
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: Limits.jsonDepth) { stack in
            var scanner = JSONScanner<Blocks, NoJSONObserver>(bytes: buffer, isObject: stack, observer: NoJSONObserver())
            return scanner.run()
        }
    }

    /// `validate(buffer:)` that tells `observer` what it reads in the same pass (what `observer`
    /// learnt of bytes that are not JSON means nothing).
    static func validate<Observer: JSONScanObserver>(buffer: UnsafeBufferPointer<UInt8>, observing observer: inout Observer) -> JSONError? {
        validate(buffer: buffer, observing: &observer, using: NativeBlocks.self)
    }

    /// `validate(buffer:observing:)` with the given block tests (the tests run both kinds).
    static func validate<Blocks: ByteBlocks, Observer: JSONScanObserver>(
        buffer: UnsafeBufferPointer<UInt8>, observing observer: inout Observer, using _: Blocks.Type
    ) -> JSONError? {
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: Limits.jsonDepth) { stack in
            var scanner = JSONScanner<Blocks, Observer>(bytes: buffer, isObject: stack, observer: observer)
            let error = scanner.run()
            observer = scanner.observer
            return error
        }
    }
}
