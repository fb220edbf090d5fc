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
        if Self.equalsIgnoringCase(word, Self.productionBytes) {
            self = .production
        } else if Self.equalsIgnoringCase(word, Self.sandboxBytes) || Self.equalsIgnoringCase(word, Self.developmentBytes) {
            self = .sandbox
        } else {
            return nil
        }
    }

    private static let productionBytes: [UInt8] = Array("production".utf8)
    private static let sandboxBytes: [UInt8] = Array("sandbox".utf8)
    private static let developmentBytes: [UInt8] = Array("development".utf8)

    /// ASCII case folding only: the three words are ASCII, and a non-ASCII byte never equals one.
    private static func equalsIgnoringCase(_ word: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8]) -> Bool {
        guard word.count == lowercase.count else { return false }
        for (index, wanted) in lowercase.enumerated() {
            let byte = word[index]
            guard byte == wanted || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == wanted) else { return false }
        }
        return true
    }

    /// The environment a token refused in this one may belong to (`--environment-fallback`).
    public var other: APNsEnvironment { self == .production ? .sandbox : .production }

    public static func < (lhs: APNsEnvironment, rhs: APNsEnvironment) -> Bool { lhs.rawValue < rhs.rawValue }
}
