/// One signing key as an operator describes it: a `--key-file` on the command line, or one
/// `[[keys]]` table of a job file (send's `--config`, the mock's `--keys-file`). Nothing is read
/// from disk here; `SigningKey` loads `file`.
public struct KeyDescription: Sendable, Equatable {
    /// The `.p8` (PKCS#8 PEM) file.
    public var file: String
    /// The 10-character key id (`kid`).
    public var keyID: String
    /// The 10-character team id (`iss`).
    public var teamID: String
    /// The one environment the key serves; nil for a key valid in both (`environment = "any"`).
    public var environment: APNsEnvironment?
    /// The bundle ids a topic-specific key serves; nil for a team-scoped key (any topic of the team).
    public var topics: [String]?
    /// The one key whose tokens may share a connection with this key's (`related-key-id`).
    public var relatedKeyID: String?

    public init(file: String, keyID: String, teamID: String, environment: APNsEnvironment? = nil,
                topics: [String]? = nil, relatedKeyID: String? = nil) {
        self.file = file
        self.keyID = keyID
        self.teamID = teamID
        self.environment = environment
        self.topics = topics
        self.relatedKeyID = relatedKeyID
    }

    /// The key id in Apple's download name `AuthKey_<KEYID>.p8` (any directory; nil otherwise).
    public static func keyID(fromFileName path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = name.dropFirst("AuthKey_".count).dropLast(".p8".count)
        return id.isEmpty ? nil : String(id)
    }

    /// Whether this key serves `bundleID` (a topic with its push-type suffix stripped).
    public func serves(bundleID: some StringProtocol) -> Bool {
        guard let topics else { return true }
        return topics.contains { $0 == bundleID }
    }

    /// The app a topic belongs to: the topic with a push type's suffix (".voip", ".complication",
    /// ".pushkit.fileprovider", ...) stripped, so a VoIP row finds its app's key.
    public static func bundleID(ofTopic topic: String) -> Substring {
        guard let owner = PushType.suffixOwner(of: topic), let suffix = owner.topicSuffix,
              topic.utf8.count > suffix.utf8.count else { return Substring(topic) }
        return topic.dropLast(suffix.count)
    }

    /// `bundleID(ofTopic:)` over a topic's bytes: how many of them, from the start, are the app's
    /// bundle id (all unless a push type's suffix ends them). Read per row by the key router.
    public static func bundleIDLength(ofTopic topic: UnsafeBufferPointer<UInt8>) -> Int {
        guard let suffix = PushType.suffixOwner(ofBytes: topic)?.topicSuffix, topic.count > suffix.utf8.count else {
            return topic.count
        }
        return topic.count - suffix.utf8.count
    }
}
