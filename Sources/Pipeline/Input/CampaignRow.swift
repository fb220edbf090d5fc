/// One notification handed to ``Campaign/run(rows:)`` instead of a CSV row: the same columns, as
/// the text a CSV field would hold.
///
/// The values stay text (not an `Int` priority or a push-type enum) so that a row from memory goes
/// through exactly the checks a CSV row does, with the same `rejected` reasons: a bad value ends
/// its row as `rejected` with APNs' reason name, it never stops the run. A `nil` column is an
/// empty CSV field: the run's value (`CampaignConfiguration.defaults`, `defaultPayload`) is used.
/// Unlike an unquoted CSV field, a value is not trimmed of surrounding spaces.
public struct CampaignRow: Sendable, Equatable {
    /// The device token, 64 hex digits (either case); the result log repeats it exactly.
    public var deviceToken: String
    /// The JSON object to send; nil for the configuration's `defaultPayload`.
    public var payload: String?
    /// `apns-topic`; nil for the run's topic.
    public var topic: String?
    /// `apns-push-type` (`alert`, `background`, ...); nil for the run's.
    public var pushType: String?
    /// `apns-priority` (`10`, `5` or `1`); nil for the run's.
    public var priority: String?
    /// `apns-expiration`, seconds since the epoch (`0`: deliver once or never); nil for the run's.
    public var expiration: String?
    /// `apns-collapse-id`; nil for the run's.
    public var collapseID: String?
    /// `apns-id`, a UUID chosen by the caller; nil to let APNs choose one.
    public var apnsID: String?
    /// The row's APNs environment (`production`, `sandbox`, or `development` for sandbox), as the
    /// CSV's `environment` column: read only with several credentials
    /// (`CampaignConfiguration.credentials`); nil for the run's (`environment`). A value outside
    /// the list ends the row `rejected` `InvalidEnvironment`.
    public var environment: String?
    /// The credential to send with (a key id, or a certificate's label), as the CSV's `key_id`
    /// column: read only with several credentials; nil to pick one by the row's topic. One that
    /// names no credential ends the row `rejected` `UnknownKeyId`.
    public var keyID: String?

    /// A row; every column but the device token may be left to the run's defaults.
    public init(deviceToken: String, payload: String? = nil, topic: String? = nil, pushType: String? = nil,
                priority: String? = nil, expiration: String? = nil, collapseID: String? = nil,
                apnsID: String? = nil, environment: String? = nil, keyID: String? = nil) {
        self.deviceToken = deviceToken
        self.payload = payload
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.environment = environment
        self.keyID = keyID
    }

    /// The value of `column`, as the CSV field would hold it.
    func value(_ column: CSVColumn) -> String? {
        switch column {
        case .deviceToken: deviceToken
        case .payload: payload
        case .topic: topic
        case .pushType: pushType
        case .priority: priority
        case .expiration: expiration
        case .collapseID: collapseID
        case .apnsID: apnsID
        }
    }
}
