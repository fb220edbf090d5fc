import APNs
import Testing

/// docs/apns.md's response table, written out case by case.
let reasonTable: [(Reason, String, Int, Disposition)] = [
    (.badCollapseId, "BadCollapseId", 400, .permanent),
    (.badExpirationDate, "BadExpirationDate", 400, .permanent),
    (.badMessageId, "BadMessageId", 400, .permanent),
    (.badPriority, "BadPriority", 400, .permanent),
    (.badTopic, "BadTopic", 400, .permanent),
    (.duplicateHeaders, "DuplicateHeaders", 400, .permanent),
    (.invalidPushType, "InvalidPushType", 400, .permanent),
    (.missingDeviceToken, "MissingDeviceToken", 400, .permanent),
    (.missingTopic, "MissingTopic", 400, .permanent),
    (.payloadEmpty, "PayloadEmpty", 400, .permanent),
    (.topicDisallowed, "TopicDisallowed", 400, .permanent),
    (.idleTimeout, "IdleTimeout", 400, .permanent),
    (.invalidPayload, "InvalidPayload", 400, .permanent),
    (.featureNotEnabled, "FeatureNotEnabled", 400, .permanent),
    (.missingChannelId, "MissingChannelId", 400, .permanent),
    (.badChannelId, "BadChannelId", 400, .permanent),
    (.channelNotRegistered, "ChannelNotRegistered", 400, .permanent),
    (.badRequestParams, "BadRequestParams", 400, .permanent),
    (.badRequestPayload, "BadRequestPayload", 400, .permanent),
    (.missingPushType, "MissingPushType", 400, .permanent),
    (.cannotCreateChannelConfig, "CannotCreateChannelConfig", 400, .permanent),
    (.badDeviceToken, "BadDeviceToken", 400, .badToken),
    (.deviceTokenNotForTopic, "DeviceTokenNotForTopic", 400, .badToken),
    (.expiredProviderToken, "ExpiredProviderToken", 403, .refreshToken),
    (.invalidProviderToken, "InvalidProviderToken", 403, .credentialsRefused),
    (.missingProviderToken, "MissingProviderToken", 403, .credentialsRefused),
    (.badCertificate, "BadCertificate", 403, .credentialsRefused),
    (.badCertificateEnvironment, "BadCertificateEnvironment", 403, .credentialsRefused),
    (.forbidden, "Forbidden", 403, .credentialsRefused),
    (.unrelatedKeyIdInToken, "UnrelatedKeyIdInToken", 403, .credentialsRefused),
    (.badEnvironmentKeyIdInToken, "BadEnvironmentKeyIdInToken", 403, .credentialsRefused),
    (.topicMismatch, "TopicMismatch", 403, .credentialsRefused),
    (.badPath, "BadPath", 404, .permanent),
    (.methodNotAllowed, "MethodNotAllowed", 405, .permanent),
    (.unregistered, "Unregistered", 410, .deadToken),
    (.expiredToken, "ExpiredToken", 410, .deadToken),
    (.payloadTooLarge, "PayloadTooLarge", 413, .permanent),
    (.tooManyRequests, "TooManyRequests", 429, .retryLater(.perDeviceToken)),
    (.tooManyProviderTokenUpdates, "TooManyProviderTokenUpdates", 429, .retryLater(.keepProviderToken)),
    (.internalServerError, "InternalServerError", 500, .retryLater(.connection)),
    (.serviceUnavailable, "ServiceUnavailable", 503, .retryLater(.connection)),
    (.shutdown, "Shutdown", 503, .retryLater(.connection)),
]

@Suite struct ReasonTests {
    @Test func tableCoversEveryReasonExactlyOnce() {
        #expect(reasonTable.count == Reason.allCases.count)
        #expect(Set(reasonTable.map(\.0)) == Set(Reason.allCases))
    }

    @Test(arguments: reasonTable)
    func reasonHasItsDocumentedNameStatusAndDisposition(
        reason: Reason, name: String, status: Int, disposition: Disposition
    ) {
        #expect(reason.name == name)
        #expect(Reason(name: name) == reason)
        #expect(reason.status == status)
        #expect(reason.disposition == disposition)
        #expect(Disposition(status: status, reason: reason) == disposition)
    }

    @Test func bothSpellingsOfBadEnvironmentKeyMeanTheSame() {
        #expect(Reason(name: "BadEnvironmentKeyInToken") == .badEnvironmentKeyIdInToken)
        #expect(Reason(name: "BadEnvironmentKeyIdInToken") == .badEnvironmentKeyIdInToken)
    }

    /// Apple's broadcast error table writes 503 "Service Unavailable"; the device table ServiceUnavailable.
    @Test func bothSpellingsOfServiceUnavailableMeanTheSame() {
        #expect(Reason(name: "Service Unavailable") == .serviceUnavailable)
        #expect(Reason(name: "Service Unavailable")?.disposition == .retryLater(.connection))
    }

    @Test func unknownOrMisspelledNamesAreNotReasons() {
        for name in ["", "SomethingNew", "baddevicetoken", "BadDeviceToken ", "Bad Device Token"] {
            #expect(Reason(name: name) == nil, "\(name)")
        }
    }

    @Test func runLevelMisconfigurationsAreTheSetupReasons() {
        let expected: Set<Reason> = [.badTopic, .topicDisallowed, .missingTopic, .invalidPushType,
                                     .badPriority, .badExpirationDate]
        #expect(Set(Reason.allCases.filter(\.isRunLevelMisconfiguration)) == expected)
    }

    @Test func onlyInvalidPayloadIsOurOwnReason() {
        #expect(Reason.allCases.filter { !$0.isAPNsReason } == [.invalidPayload])
    }

    @Test(arguments: [
        (200, Disposition.delivered), (400, .permanent), (403, .credentialsRefused),
        (404, .permanent), (405, .permanent), (410, .deadToken), (413, .permanent),
        (418, .permanent), (429, .retryLater(.perDeviceToken)), (500, .retryLater(.connection)),
        (502, .retryLater(.connection)), (503, .retryLater(.connection)), (599, .retryLater(.connection)),
        (302, .permanent), (0, .permanent), (-1, .permanent),
    ])
    func unknownReasonIsClassifiedByStatus(status: Int, expected: Disposition) {
        #expect(Disposition(status: status, reason: nil) == expected)
    }

    @Test func twoHundredIsDeliveredWhateverTheReasonSays() {
        #expect(Disposition(status: 200, reason: .badTopic) == .delivered)
    }
}
