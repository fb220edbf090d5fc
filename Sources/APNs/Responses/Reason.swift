/// Every reason string of docs/apns.md, with its HTTP status and what a sender does about it.
/// `invalidPayload` is this project's own (a body that is not a JSON object; APNs names no
/// reason for it). `name` is the string on the wire; `init?(name:)` also reads
/// "BadEnvironmentKeyInToken", the other spelling APNs uses for `badEnvironmentKeyIdInToken`, and
/// "Service Unavailable", the spelling of Apple's broadcast error table for `serviceUnavailable`.
/// The broadcast and channel-management APIs (iOS 18) add their own 400s and 403 TopicMismatch;
/// they share the rest with device pushes, and never answer 410.
public enum Reason: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // 400: the request is wrong.
    case badCollapseId, badExpirationDate, badMessageId, badPriority, badTopic
    case duplicateHeaders, invalidPushType, missingDeviceToken, missingTopic, payloadEmpty
    case topicDisallowed, idleTimeout
    /// Not an APNs reason: the payload is not a JSON object.
    case invalidPayload
    // 400, broadcast and channel management only: the request is wrong.
    case featureNotEnabled, missingChannelId, badChannelId, channelNotRegistered, badRequestParams
    case badRequestPayload, missingPushType, cannotCreateChannelConfig
    // 400: the token is wrong for this topic/environment.
    case badDeviceToken, deviceTokenNotForTopic
    // 403
    case expiredProviderToken
    case invalidProviderToken, missingProviderToken, badCertificate, badCertificateEnvironment
    case forbidden, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    /// Broadcast and channel management: the credentials do not serve the app in the path.
    case topicMismatch
    // 404, 405, 410, 413
    case badPath, methodNotAllowed, unregistered, expiredToken, payloadTooLarge
    // 429, 500, 503
    case tooManyRequests, tooManyProviderTokenUpdates, internalServerError
    case serviceUnavailable, shutdown

    /// The reason as APNs spells it, e.g. "BadDeviceToken".
    public var name: String {
        switch self {
        case .badCollapseId: "BadCollapseId"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageId: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .idleTimeout: "IdleTimeout"
        case .invalidPayload: "InvalidPayload"
        case .featureNotEnabled: "FeatureNotEnabled"
        case .missingChannelId: "MissingChannelId"
        case .badChannelId: "BadChannelId"
        case .channelNotRegistered: "ChannelNotRegistered"
        case .badRequestParams: "BadRequestParams"
        case .badRequestPayload: "BadRequestPayload"
        case .missingPushType: "MissingPushType"
        case .cannotCreateChannelConfig: "CannotCreateChannelConfig"
        case .badDeviceToken: "BadDeviceToken"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .forbidden: "Forbidden"
        case .unrelatedKeyIdInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIdInToken: "BadEnvironmentKeyIdInToken"
        case .topicMismatch: "TopicMismatch"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .unregistered: "Unregistered"
        case .expiredToken: "ExpiredToken"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyRequests: "TooManyRequests"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        }
    }

    /// Reads a reason string, exactly as spelled (case matters); nil for a string this table
    /// does not know, which is then classified by its status (`Disposition(status:reason:)`).
    public init?(name: some StringProtocol) {
        if "BadEnvironmentKeyInToken".utf8.elementsEqual(name.utf8) {
            self = .badEnvironmentKeyIdInToken
            return
        }
        if "Service Unavailable".utf8.elementsEqual(name.utf8) {
            self = .serviceUnavailable
            return
        }
        guard let found = Self.all.first(where: { $0.name.utf8.elementsEqual(name.utf8) })
        else { return nil }
        self = found
    }

    /// The HTTP status APNs answers with this reason.
    public var status: Int {
        switch self {
        case .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
             .duplicateHeaders, .invalidPushType, .missingDeviceToken, .missingTopic,
             .payloadEmpty, .topicDisallowed, .idleTimeout, .invalidPayload,
             .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered,
             .badRequestParams, .badRequestPayload, .missingPushType, .cannotCreateChannelConfig,
             .badDeviceToken, .deviceTokenNotForTopic: 400
        case .expiredProviderToken, .invalidProviderToken, .missingProviderToken,
             .badCertificate, .badCertificateEnvironment, .forbidden,
             .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .topicMismatch: 403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .unregistered, .expiredToken: 410
        case .payloadTooLarge: 413
        case .tooManyRequests, .tooManyProviderTokenUpdates: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        }
    }

    /// What a sender does when APNs answers with this reason.
    public var disposition: Disposition {
        switch self {
        case .unregistered, .expiredToken: .deadToken
        case .badDeviceToken, .deviceTokenNotForTopic: .badToken
        case .expiredProviderToken: .refreshToken
        case .invalidProviderToken, .missingProviderToken, .badCertificate,
             .badCertificateEnvironment, .forbidden, .unrelatedKeyIdInToken,
             .badEnvironmentKeyIdInToken, .topicMismatch: .credentialsRefused
        case .tooManyRequests: .retryLater(.perDeviceToken)
        case .tooManyProviderTokenUpdates: .retryLater(.keepProviderToken)
        case .internalServerError, .serviceUnavailable, .shutdown: .retryLater(.connection)
        case .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
             .duplicateHeaders, .invalidPushType, .missingDeviceToken, .missingTopic,
             .payloadEmpty, .topicDisallowed, .idleTimeout, .invalidPayload,
             .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered,
             .badRequestParams, .badRequestPayload, .missingPushType, .cannotCreateChannelConfig,
             .badPath, .methodNotAllowed, .payloadTooLarge: .permanent
        }
    }

    /// True for reasons about how the run sends (its topic, push type, priority, expiration),
    /// not about one device token: when many answers in a row say so, every later row would
    /// fail the same way, and the pipeline stops the run.
    public var isRunLevelMisconfiguration: Bool {
        switch self {
        case .badTopic, .topicDisallowed, .missingTopic, .invalidPushType, .badPriority,
             .badExpirationDate: true
        default: false
        }
    }

    /// False only for `invalidPayload`, which APNs never sends.
    public var isAPNsReason: Bool { self != .invalidPayload }

    /// APNs' own name for the reason, as the result log writes it.
    public var description: String { name }

    /// Built once: the synthesized `allCases` makes a new array on every call.
    static let all: [Reason] = allCases
}
