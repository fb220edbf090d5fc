/// A channel's `message-storage-policy`, fixed when it is created: whether APNs keeps the most
/// recent broadcast for devices that subscribe later.
public enum ChannelStoragePolicy: Int, Sendable, CaseIterable {
    /// 0, No Message Stored: a higher publishing budget; every broadcast must have expiration 0.
    case noMessageStored = 0
    /// 1, Most Recent Message Stored: the last broadcast is kept (up to 8 hours).
    case mostRecentMessageStored = 1

    /// The create request's body, and the read answer's: `{"message-storage-policy":N,"push-type":"LiveActivity"}`.
    public var channelJSON: String {
        "{\"message-storage-policy\":\(rawValue),\"push-type\":\"\(BroadcastRules.channelPushType)\"}"
    }

    /// Whether a broadcast with `expiration` (seconds; 0 = not stored) may go to such a channel:
    /// a nonzero one on a No-Message-Stored channel is BadExpirationDate.
    public func accepts(expiration: Int64) -> Bool {
        self == .mostRecentMessageStored || expiration == 0
    }
}
