/// Apple's two push environments. A device token belongs to one of them (a development build's
/// token is a sandbox token), and since 2025 a signing key may be restricted to one.
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable, Comparable {
    case production
    case sandbox

    /// Reads `production`, `sandbox`, and `development` (the `aps-environment` entitlement's
    /// spelling) as sandbox; case and surrounding spaces do not matter. nil for anything else.
    public init?(parsing text: some StringProtocol) {
        var word = Substring(text)
        while let first = word.first, first == " " || first == "\t" { word = word.dropFirst() }
        while let last = word.last, last == " " || last == "\t" { word = word.dropLast() }
        switch word.lowercased() {
        case "production": self = .production
        case "sandbox", "development": self = .sandbox
        default: return nil
        }
    }

    /// The environment a token refused in this one may belong to (`--environment-fallback`).
    public var other: APNsEnvironment { self == .production ? .sandbox : .production }

    public static func < (lhs: APNsEnvironment, rhs: APNsEnvironment) -> Bool { lhs.rawValue < rhs.rawValue }
}
