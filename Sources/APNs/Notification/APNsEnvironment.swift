/// Apple's two push environments. A device token belongs to one of them (a development build's
/// token is a sandbox token), and since 2025 a signing key may be restricted to one.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable, Comparable {
    case production
    case sandbox

    /// Reads `production`, `sandbox`, and `development` (the `aps-environment` entitlement's
    /// spelling) as sandbox; case and surrounding spaces do not matter. nil for anything else.
    public init?(parsing text: some StringProtocol) {
        guard let parsed = Array(text.utf8).withUnsafeBufferPointer(APNsEnvironment.init(parsingBytes:)) else { return nil }
        self = parsed
    }

    /// `init(parsing:)` over a field's bytes, without making a string: the `environment` column
    /// is read per row. (Concrete, not generic: a generic one is not specialized across modules.)
    public init?(parsingBytes bytes: UnsafeBufferPointer<UInt8>) {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let word = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if Self.equalsIgnoringCase(word, "production") {
            self = .production
        } else if Self.equalsIgnoringCase(word, "sandbox") || Self.equalsIgnoringCase(word, "development") {
            self = .sandbox
        } else {
            return nil
        }
    }

    /// ASCII case folding only: the three words are ASCII, and a non-ASCII byte never equals one.
    /// Against a `StaticString`'s constant bytes: a static array here was a `swift_once` and a
    /// retain per comparison, per row.
    private static func equalsIgnoringCase(_ word: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard word.count == lowercase.utf8CodeUnitCount else { return false }
        let wanted = lowercase.utf8Start
        for index in 0..<word.count {
            let byte = word[index]
            guard byte == wanted[index] || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == wanted[index]) else { return false }
        }
        return true
    }

    /// The environment a token refused in this one may belong to (`--environment-fallback`).
    public var other: APNsEnvironment { self == .production ? .sandbox : .production }

    public static func < (lhs: APNsEnvironment, rhs: APNsEnvironment) -> Bool { lhs.rawValue < rhs.rawValue }
}
