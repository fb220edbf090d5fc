/// Apple's HPACK guidance for the request headers a provider sends: `authorization` never indexed
/// (the token is a secret no intermediary may keep); `apns-id`, `apns-expiration` and
/// `apns-collapse-id` indexed on a connection's first request and never indexed afterwards (they
/// change per request, so indexing them only churns APNs' small dynamic table); every other header
/// indexed. The HTTP/2 client applies it (`H2Header.IndexingRules`, which a caller builds from these
/// lists); `:path` the client sends never indexed itself. A broadcast's `apns-channel-id`, of which
/// the guidance says nothing, goes as `apns-id` does: indexed on a connection's first request (its
/// name enters the table), never indexed afterwards (`H2ClientSession`, `BroadcastRowDecoder`).
public enum HPACKGuidance {
    /// Request headers never indexed.
    public static let neverIndexed = ["authorization"]
    /// Request headers indexed on a connection's first request only.
    public static let indexedOnFirstRequestOnly = ["apns-id", "apns-expiration", "apns-collapse-id"]
}
