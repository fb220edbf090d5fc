import APNs

/// One signing key the mock verifies tokens of (`--verify-key-file`, a `--keys-file` entry), with
/// the limits Apple now puts on a key: the one environment it serves, the bundle ids it serves,
/// and the one related key whose tokens may share its connections.
public struct MockTokenKey: Sendable {
    /// Checks the key's tokens (its key id and team id included).
    public var verifier: TokenVerifier
    /// The one environment the key serves; nil for both.
    public var environment: APNsEnvironment?
    /// The bundle ids a topic-specific key serves; nil for any topic (a team-scoped key).
    public var topics: Set<String>?
    /// The key whose tokens may share a connection with this key's (either one may name the other).
    public var relatedKeyID: String?

    /// A key with `verifier`, restricted as given (nothing by default: an older key of the team).
    public init(verifier: TokenVerifier, environment: APNsEnvironment? = nil, topics: Set<String>? = nil,
                relatedKeyID: String? = nil) {
        self.verifier = verifier
        self.environment = environment
        self.topics = topics
        self.relatedKeyID = relatedKeyID
    }

    /// The key id its tokens carry.
    public var keyID: String { verifier.keyID.value }
}

/// The keys of one server with what each request needs decided in advance: whether the key is
/// refused in the environment the server plays, the topics it may serve there, and which key is
/// related to which. Immutable; reactor thread.
struct MockKeyRing {
    struct Entry {
        let keyID: String
        /// Restricted to the other environment: BadEnvironmentKeyIdInToken.
        let wrongEnvironment: Bool
        /// The bundle ids a request signed by this key may name; nil: the server's own topic rule.
        let allowedTopics: Set<String>?
        /// Indices of the keys whose tokens may share a connection with this one's.
        let related: [Int]
    }

    let entries: [Entry]

    init(keys: [MockTokenKey], environment: MockAPNsEnvironment, serverTopics: Set<String>) {
        var entries: [Entry] = []
        for key in keys {
            var allowed = key.topics
            if let topics = allowed, !serverTopics.isEmpty { allowed = topics.intersection(serverTopics) }
            var related: [Int] = []
            for (index, other) in keys.enumerated() where other.keyID != key.keyID {
                if other.keyID == key.relatedKeyID || other.relatedKeyID == key.keyID { related.append(index) }
            }
            entries.append(Entry(keyID: key.keyID,
                                 wrongEnvironment: key.environment.map { $0.rawValue != environment.rawValue } ?? false,
                                 allowedTopics: allowed, related: related))
        }
        self.entries = entries
    }

    /// Whether tokens of key `other` may go on a connection whose first accepted push used key `bound`.
    func mayShare(bound: Int, with other: Int) -> Bool {
        bound == other || entries[bound].related.contains(other)
    }
}
