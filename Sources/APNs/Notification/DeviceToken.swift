import ByteScan
/// An APNs device token: the bytes an app got from `registerForRemoteNotifications`, written
/// as hex. Its length is not assumed (32 bytes today); only empty and absurd (over
/// `Limits.deviceTokenBytes`) tokens are refused.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The token's bytes.
    public let bytes: [UInt8]

    /// Decodes hex digits, in either case, with nothing around them.
    public init(hex: some StringProtocol) throws(DeviceTokenError) {
        if let error = Self.check(hex: hex) { throw error }
        // `some StringProtocol` is not specialized across the module boundary, so iterating
        // `hex.utf8` goes through protocol witnesses per byte (a profile's top item for `send`):
        // decode from the contiguous UTF-8 buffer when there is one (native String and Substring).
        if let bytes = hex.utf8.withContiguousStorageIfAvailable({ Self.decode(utf8: $0) }) {
            self.bytes = bytes
        } else {
            self.bytes = Self.decode(utf8: Array(hex.utf8))
        }
    }

    /// Wraps bytes already decoded, refusing empty and over-long ones.
    public init(bytes: [UInt8]) throws(DeviceTokenError) {
        if bytes.isEmpty { throw .empty }
        if bytes.count > Limits.deviceTokenBytes { throw .tooLong(bytes: bytes.count) }
        self.bytes = bytes
    }

    /// What is wrong with `hex` as a device token, or nil when it is one. One pass over the
    /// UTF-8 bytes and no allocation, so a row can be checked before anything is built.
    public static func check(hex: some StringProtocol) -> DeviceTokenError? {
        if let verdict = hex.utf8.withContiguousStorageIfAvailable({ check(utf8: $0) }) { return verdict }
        return Array(hex.utf8).withUnsafeBufferPointer { check(utf8: $0) }
    }

    /// `check(hex:)` for text still in UTF-8 bytes (a CSV field).
    public static func check(hexUTF8: ArraySlice<UInt8>) -> DeviceTokenError? {
        hexUTF8.withUnsafeBufferPointer { check(utf8: $0) }
    }

    /// `check(hexUTF8:)` for the bytes at `range` of `utf8` (a CSV batch's storage), borrowed: a
    /// slice would retain the buffer.
    public static func check(hexUTF8 utf8: borrowing [UInt8], in range: Range<Int>) -> DeviceTokenError? {
        utf8.withUnsafeBufferPointer { check(utf8: UnsafeBufferPointer(rebasing: $0[range])) }
    }

    private static func check(utf8: UnsafeBufferPointer<UInt8>) -> DeviceTokenError? {
        check(utf8: utf8, using: NativeBlocks.self)
    }

    /// `check(utf8:)` with the given block tests (the tests run both kinds).
    @inline(__always)
    static func check<Blocks: ByteBlocks>(utf8: UnsafeBufferPointer<UInt8>, using blocks: Blocks.Type) -> DeviceTokenError? {
        if let offset = firstNonHexDigit(utf8, using: blocks) { return .notHex(offset: offset) }
        let digits = utf8.count
        if digits == 0 { return .empty }
        if digits % 2 != 0 { return .oddLength(hexDigits: digits) }
        if digits / 2 > Limits.deviceTokenBytes { return .tooLong(bytes: digits / 2) }
        return nil
    }

    /// Runs for every row of a campaign, 16 bytes a step (`ByteBlocks`), the last step on the last
    /// 16 bytes even if it overlaps the one before (whose bytes are then tested twice): a 64-digit
    /// token is 4 blocks. Nearly every token is good, so the blocks' verdicts are gathered with no
    /// branch per block, and only a bad token is walked again to find its first bad byte. Shorter
    /// than a block: 8 bytes a step (`SWAR`), the same way.
    static func firstNonHexDigit<Blocks: ByteBlocks>(_ utf8: UnsafeBufferPointer<UInt8>, using _: Blocks.Type) -> Int? {
        guard let base = utf8.baseAddress else { return nil }
        let count = utf8.count
        guard count >= 16 else { return firstNonHexDigitInWords(base, count: count) }
        var bad = Blocks.nonHexDigits(Blocks.load(base + (count &- 16)))
        var index = 0
        while count &- index > 16 {
            bad = Blocks.union(bad, Blocks.nonHexDigits(Blocks.load(base + index)))
            index &+= 16
        }
        guard !Blocks.isEmpty(bad) else { return nil }
        return firstNonHexDigitIn(base, count: count, using: Blocks.self)
    }

    /// The offset of the first byte that is not a hex digit, in a text of 16 bytes or more known
    /// to hold one.
    @inline(never)
    private static func firstNonHexDigitIn<Blocks: ByteBlocks>(_ base: UnsafePointer<UInt8>, count: Int, using _: Blocks.Type) -> Int? {
        var index = 0
        while true {
            let bad = Blocks.nonHexDigits(Blocks.load(base + index))
            if !Blocks.isEmpty(bad) { return index &+ Blocks.first(bad) }
            if index == count &- 16 { return nil }
            index = min(index &+ 16, count &- 16)
        }
    }

    /// `firstNonHexDigit` for a text shorter than a block.
    private static func firstNonHexDigitInWords(_ base: UnsafePointer<UInt8>, count: Int) -> Int? {
        guard count >= 8 else { return UnsafeBufferPointer(start: base, count: count).firstIndex { !isHexDigit($0) } }
        var bad = SWAR.nonHexDigits(SWAR.load(base + (count &- 8)))
        bad |= SWAR.nonHexDigits(SWAR.load(base))
        guard bad != 0 else { return nil }
        var index = 0
        while true {
            let word = SWAR.nonHexDigits(SWAR.load(base + index))
            if word != 0 { return index &+ word.trailingZeroBitCount &>> 3 }
            if index == count &- 8 { return nil }
            index = min(index &+ 8, count &- 8)
        }
    }

    /// Digits already checked: every byte is a hex digit and the count is even.
    private static func decode(utf8: some Collection<UInt8>) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for byte in utf8 {
            let nibble = hexValue(byte) ?? 0
            if let h = high {
                bytes.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    /// Lowercase hex, as it goes in `:path`.
    public var hex: String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var i = 0
            for byte in bytes {
                out[i] = lowercaseHexDigit(byte >> 4)
                out[i + 1] = lowercaseHexDigit(byte & 0x0f)
                i += 2
            }
            return i
        }
    }

    /// The request path: `/3/device/<lowercase hex>`.
    public var path: String { "/3/device/" + hex }

    /// The token as lowercase hex, as the request path carries it.
    public var description: String { hex }
}

/// Why a text is not a device token. `description` says what is wrong and with which value.
public enum DeviceTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No digits at all.
    case empty
    /// An odd number of hex digits: a token is whole bytes.
    case oddLength(hexDigits: Int)
    /// A byte that is not 0-9, a-f or A-F, at this UTF-8 byte offset.
    case notHex(offset: Int)
    /// More than `Limits.deviceTokenBytes` bytes.
    case tooLong(bytes: Int)

    /// What is wrong and with which value, for a `rejected` row's detail.
    public var description: String {
        switch self {
        case .empty:
            "device token is empty"
        case .oddLength(let digits):
            "device token has \(digits) hex digits; a token is whole bytes, so the count must be even"
        case .notHex(let offset):
            "device token has a character that is not a hex digit at byte \(offset + 1); use 0-9 and a-f only, no spaces or brackets"
        case .tooLong(let bytes):
            "device token is \(bytes) bytes; APNs tokens are at most \(Limits.deviceTokenBytes) bytes (usually 32)"
        }
    }
}

@inline(__always)
func isHexDigit(_ byte: UInt8) -> Bool {
    (byte &- UInt8(ascii: "0") < 10) || ((byte | 0x20) &- UInt8(ascii: "a") < 6)
}

@inline(__always)
func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
    default: nil
    }
}

@inline(__always)
func lowercaseHexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ nibble &- 10
}
