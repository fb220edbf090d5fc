extension ProviderToken {
    /// The 10-character id Apple shows next to a signing key (the token header's `kid`).
    public struct KeyID: Sendable, Hashable, CustomStringConvertible {
        /// The id as Apple shows it.
        public let value: String

        /// Accepts exactly 10 characters, each A–Z or 0–9.
        public init(_ text: some StringProtocol) throws(ProviderTokenError) {
            guard ProviderToken.isAppleIdentifier(text) else { throw .invalidKeyID(String(text)) }
            value = String(text)
        }

        /// The id itself: it is not a secret.
        public var description: String { value }
    }

    /// The 10-character Apple Developer team id (the token claims' `iss`).
    public struct TeamID: Sendable, Hashable, CustomStringConvertible {
        /// The id as Apple shows it.
        public let value: String

        /// Accepts exactly 10 characters, each A–Z or 0–9.
        public init(_ text: some StringProtocol) throws(ProviderTokenError) {
            guard ProviderToken.isAppleIdentifier(text) else { throw .invalidTeamID(String(text)) }
            value = String(text)
        }

        /// The id itself: it is not a secret.
        public var description: String { value }
    }

    static func isAppleIdentifier(_ text: some StringProtocol) -> Bool {
        var count = 0
        for byte in text.utf8 {
            let allowed = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            guard allowed else { return false }
            count += 1
        }
        return count == 10
    }
}

/// A key id or team id that is not what Apple issues.
public enum ProviderTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidKeyID(String)
    case invalidTeamID(String)

    /// The same text as `message`.
    public var description: String { message }

    /// What is wrong, with the value, and what a valid one looks like.
    public var message: String {
        switch self {
        case .invalidKeyID(let value):
            "key id \"\(value)\" is not valid: expected exactly 10 characters, each A–Z or 0–9 (the Key ID shown next to your APNs key in your Apple Developer account, e.g. ABC123DEFG)"
        case .invalidTeamID(let value):
            "team id \"\(value)\" is not valid: expected exactly 10 characters, each A–Z or 0–9 (the Team ID shown under Membership in your Apple Developer account, e.g. DEF123GHIJ)"
        }
    }
}
