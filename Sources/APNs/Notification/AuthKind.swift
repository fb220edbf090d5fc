/// How a run authenticates to APNs. It decides whether `apns-topic` is required:
/// a provider token names only a team, so the topic must say which app; a certificate
/// names its app itself, so the topic may be omitted.
public enum AuthKind: Sendable, Hashable {
    /// Provider token (JWT, ES256): `apns-topic` is required.
    case token
    /// Provider certificate (mutual TLS): `apns-topic` is optional.
    case certificate
}
