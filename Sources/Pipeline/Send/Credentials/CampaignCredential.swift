import APNs
import Transport

/// One credential a campaign can send with: a signing key (its provider tokens) or a client
/// certificate (its TLS context). With several, each row picks one (its `key_id` column, else by
/// its topic and environment), and connections are grouped by credential and environment.
public struct CampaignCredential: Sendable {
    /// What authenticates the requests.
    public enum Secret: Sendable {
        /// Provider tokens of one signing key (one source per key per process).
        case token(TokenSource)
        /// A TLS client certificate: the client context that holds it (and the trust).
        case certificate(TLSContext)
    }

    /// The key id, or the certificate's subject: what records, the summary and messages name.
    public var label: String
    /// The one environment this credential serves; nil for both.
    public var environment: APNsEnvironment?
    /// The bundle ids it serves (topics with their push-type suffix stripped); nil for any topic.
    public var topics: Set<String>?
    /// A key whose tokens may share this key's connections (`related-key-id`).
    public var relatedKeyID: String?
    public var secret: Secret

    public init(label: String, environment: APNsEnvironment? = nil, topics: Set<String>? = nil,
                relatedKeyID: String? = nil, secret: Secret) {
        self.label = label
        self.environment = environment
        self.topics = topics
        self.relatedKeyID = relatedKeyID
        self.secret = secret
    }
}
