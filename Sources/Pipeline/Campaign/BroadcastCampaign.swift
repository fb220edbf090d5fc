import APNs
import Transport

/// A Live Activity broadcast campaign (`apns-bulk broadcast`, docs/apns.md): each row is one update
/// to a channel, `POST /4/broadcasts/apps/<bundleID>` with the channel in `apns-channel-id`, sent,
/// retried and recorded by the same engine as device pushes. What differs is said here once: the
/// input's column names, the request's path, the answer header kept, the record's kind and the
/// list of dead channels.
public struct BroadcastCampaign: Sendable {
    /// The app whose channels the rows name, without a push-type suffix.
    public var bundleID: String

    public init(bundleID: String) {
        self.bundleID = bundleID
    }

    /// The request's `:path`, the same for every row.
    var path: String { BroadcastEndpoints.broadcastPath(bundleID: bundleID) }

    /// What each answer keeps: the echoed (or APNs-made) `apns-request-id`, and `apns-unique-id`.
    static let responseHeaders = H2CapturedHeaders(text: BroadcastRules.requestIDHeader, uuid: ResponseHeaderNames.uniqueID)

    /// dead-channels.csv's name in `--out`.
    public static let deadChannelsFile = "dead-channels.csv"
}

extension CampaignConfiguration {
    /// What the input's header names mean.
    var columnNames: CSVColumnNames { broadcast == nil ? .deviceCampaign : .broadcast }

    /// The `:path` of every request: `/3/device/` and the token, or a broadcast's own path.
    var requestPathPrefix: String { broadcast?.path ?? "/3/device/" }

    /// A broadcast's rules for its rows, with the run's `--priority` and `--expiration`; nil for device pushes.
    var broadcastRows: BroadcastRowDecoder? {
        broadcast.map { _ in BroadcastRowDecoder(priority: defaults.priority, expiration: defaults.expiration) }
    }

    /// The record kind of this campaign's lines.
    var recordKind: ResultRecord.Kind { broadcast == nil ? .deviceToken : .broadcast }

    /// The answer held until a 200 proves the environment: a channel of the other environment is
    /// ChannelNotRegistered as a token of it is BadDeviceToken (`EnvironmentProof`).
    var heldUnproven: EnvironmentProof.Held { broadcast == nil ? .badDeviceToken : .channelNotRegistered }
}
