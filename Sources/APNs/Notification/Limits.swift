/// The sizes APNs (and this project) enforce, in bytes. See docs/apns.md.
public enum Limits {
    /// Largest payload for every push type but VoIP.
    public static let payloadBytes = 4096
    /// Largest payload for `voip` pushes.
    public static let voipPayloadBytes = 5120
    /// Largest `apns-collapse-id`, in UTF-8 bytes.
    public static let collapseIDBytes = 64
    /// Largest device token we accept. Apple says not to assume a length (today 32 bytes);
    /// this only stops absurd input.
    public static let deviceTokenBytes = 100
    /// Largest CSV field the row decoder accepts (64 KiB).
    public static let csvFieldBytes = 65536
    /// Deepest JSON nesting `JSONValidator` accepts (the top-level object counts as 1).
    public static let jsonDepth = 512

    /// The payload limit for a push type: 5120 for VoIP, 4096 otherwise.
    public static func payloadBytes(for pushType: PushType) -> Int {
        pushType == .voip ? voipPayloadBytes : payloadBytes
    }
}
