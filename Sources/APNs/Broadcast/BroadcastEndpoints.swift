/// Where Live Activity broadcasts and channel management go (docs/apns.md): the hosts by
/// environment and the request paths, so that the sender, its commands and the mock spell them once.
public enum BroadcastEndpoints {
    /// Apple's channel-management host and port: `api-manage-broadcast.push.apple.com:2196` in
    /// production, `api-manage-broadcast.sandbox.push.apple.com:2195` in sandbox.
    public static func managementHost(_ environment: APNsEnvironment) -> (host: String, port: UInt16) {
        switch environment {
        case .production: ("api-manage-broadcast.push.apple.com", 2196)
        case .sandbox: ("api-manage-broadcast.sandbox.push.apple.com", 2195)
        }
    }

    /// Apple's broadcast host and port (the device pushes' hosts, as Apple's prose says; its
    /// header samples name `api-broadcast.sandbox.push.apple.com`: keep it overridable).
    public static func broadcastHost(_ environment: APNsEnvironment) -> (host: String, port: UInt16) {
        switch environment {
        case .production: ("api.push.apple.com", 443)
        case .sandbox: ("api.sandbox.push.apple.com", 443)
        }
    }

    /// `POST` a broadcast to app `bundleID`'s channels.
    public static func broadcastPath(bundleID: String) -> String { "/4/broadcasts/apps/\(bundleID)" }

    /// `POST` (create), `GET` (read) and `DELETE` a channel of `bundleID` (`apns-channel-id` names it).
    public static func channelsPath(bundleID: String) -> String { "/1/apps/\(bundleID)/channels" }

    /// `GET` every channel id of `bundleID`.
    public static func allChannelsPath(bundleID: String) -> String { "/1/apps/\(bundleID)/all-channels" }
}
