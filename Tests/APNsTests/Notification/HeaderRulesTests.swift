import APNs
import Testing

/// The rules as the mock APNs server applies them to raw header text.
@Suite struct HeaderRulesTests {
    static let token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
    static let allowed: Set<String> = ["com.example.app", "com.apple.mgmt.External.0b6e2b6c"]

    @Test(arguments: [
        ("/3/device/" + HeaderRulesTests.token, nil),
        ("/3/device/" + HeaderRulesTests.token.uppercased(), nil),
        ("/3/device/", Reason.missingDeviceToken),
        ("/3/device/abc", .badDeviceToken),
        ("/3/device/xyz0", .badDeviceToken),
        ("/3/device/" + HeaderRulesTests.token + "/extra", .badDeviceToken),
        ("/3/device/\u{301}" + HeaderRulesTests.token, .badDeviceToken),
        ("/3/devices/" + HeaderRulesTests.token, .badPath),
        ("/2/device/" + HeaderRulesTests.token, .badPath),
        ("/3/device", .badPath),
        ("", .badPath),
    ] as [(String, Reason?)])
    func pathNamesADeviceToken(path: String, expected: Reason?) {
        #expect(HeaderRules.checkPath(path) == expected)
    }

    @Test func deviceTokenIsTakenFromThePath() {
        #expect(HeaderRules.deviceTokenHex(inPath: "/3/device/" + Self.token) == Substring(Self.token))
        #expect(HeaderRules.deviceTokenHex(inPath: "/3/other/") == nil)
    }

    @Test(arguments: PushType.allCases)
    func allowedTopicMustCarryThePushTypesSuffix(type: PushType) {
        if type == .mdm {
            #expect(HeaderRules.checkTopic("com.apple.mgmt.External.0b6e2b6c", pushType: .mdm, allowedBundleIDs: Self.allowed) == nil)
            #expect(HeaderRules.checkTopic("com.example.app.voip", pushType: .mdm, allowedBundleIDs: Self.allowed) == .topicDisallowed)
            return
        }
        let right = "com.example.app" + (type.topicSuffix ?? "")
        #expect(HeaderRules.checkTopic(right, pushType: type, allowedBundleIDs: Self.allowed) == nil)
        let wrong = type.topicSuffix == nil ? "com.example.app.voip" : "com.example.app"
        #expect(HeaderRules.checkTopic(wrong, pushType: type, allowedBundleIDs: Self.allowed) == .badTopic)
        #expect(HeaderRules.checkTopic("com.other.app" + (type.topicSuffix ?? ""), pushType: type,
                                       allowedBundleIDs: Self.allowed) == .topicDisallowed)
    }

    @Test func topicPresenceAndUnknownSuffixes() {
        #expect(HeaderRules.checkTopic(nil, pushType: .alert, allowedBundleIDs: Self.allowed) == .missingTopic)
        #expect(HeaderRules.checkTopic("", pushType: .alert, allowedBundleIDs: Self.allowed) == .missingTopic)
        #expect(HeaderRules.checkTopic("com.example.app.other", pushType: .alert, allowedBundleIDs: Self.allowed) == .topicDisallowed)
        #expect(HeaderRules.checkTopic("com.example.ap", pushType: .alert, allowedBundleIDs: Self.allowed) == .topicDisallowed)
        // An unknown push type leaves the suffix to checkPushType.
        #expect(HeaderRules.checkTopic("com.example.app.voip", pushType: nil, allowedBundleIDs: Self.allowed) == nil)
        #expect(HeaderRules.checkTopic("com.other", pushType: nil, allowedBundleIDs: Self.allowed) == .topicDisallowed)
    }

    @Test func topicIsRequiredWithTokenAuthOnly() {
        #expect(HeaderRules.checkTopic(nil, pushType: .alert, auth: .token) == .missingTopic)
        #expect(HeaderRules.checkTopic("", pushType: .alert, auth: .token) == .missingTopic)
        #expect(HeaderRules.checkTopic(nil, pushType: .voip, auth: .certificate) == nil)
        #expect(HeaderRules.checkTopic("com.example.app", pushType: .voip, auth: .certificate) == .badTopic)
        #expect(HeaderRules.checkTopic("com.example.app.voip", pushType: .voip, auth: .token) == nil)
    }

    @Test func pushTypeHeader() {
        #expect(HeaderRules.checkPushType(nil) == nil)
        for type in PushType.allCases { #expect(HeaderRules.checkPushType(type.headerValue) == nil) }
        for bad in ["foo", "", "Alert", "voip "] { #expect(HeaderRules.checkPushType(bad) == .invalidPushType) }
    }

    @Test(arguments: [
        ("10", PushType.alert, nil), ("5", .alert, nil), ("1", .alert, nil), (nil, .alert, nil),
        ("5", .background, nil),
        ("10", .background, Reason.badPriority), ("1", .background, .badPriority), (nil, .background, .badPriority),
        ("7", .alert, .badPriority), ("", .alert, .badPriority), ("05", .alert, .badPriority), ("10 ", .alert, .badPriority),
    ] as [(String?, PushType, Reason?)])
    func priorityHeader(value: String?, type: PushType, expected: Reason?) {
        #expect(HeaderRules.checkPriority(value, pushType: type) == expected)
    }

    @Test func expirationHeader() {
        for good in [nil, "0", "1700000000", "9223372036854775807"] as [String?] {
            #expect(HeaderRules.checkExpiration(good) == nil, "\(good ?? "nil")")
        }
        for bad in ["abc", "-1", "", " 1", "+1", "1.5", "1e9", "9223372036854775808"] {
            #expect(HeaderRules.checkExpiration(bad) == .badExpirationDate, "\(bad)")
        }
        #expect(HeaderRules.expirationSeconds("1700000000") == 1_700_000_000)
    }

    @Test func apnsIDMustBeACanonicalLowercaseUUID() {
        #expect(HeaderRules.checkAPNsID(nil) == nil)
        #expect(HeaderRules.checkAPNsID("123e4567-e89b-12d3-a456-426614174000") == nil)
        for bad in ["123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000",
                    "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b-12d3-a456-42661417400",
                    "123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a4564-26614174000",
                    "123e4567-e89b-12d3-a456-42661417400g", "", "not-a-uuid"] {
            #expect(HeaderRules.checkAPNsID(bad) == .badMessageId, "\(bad)")
        }
    }

    @Test func collapseIDIsAtMostSixtyFourBytes() {
        #expect(HeaderRules.checkCollapseID(nil) == nil)
        #expect(HeaderRules.checkCollapseID(String(repeating: "c", count: 64)) == nil)
        #expect(HeaderRules.checkCollapseID(String(repeating: "c", count: 65)) == .badCollapseId)
        #expect(HeaderRules.checkCollapseID(String(repeating: "é", count: 32)) == nil)  // 64 bytes
        #expect(HeaderRules.checkCollapseID(String(repeating: "€", count: 22)) == .badCollapseId)  // 66 bytes
        #expect(HeaderRules.checkCollapseID("") == .badCollapseId)
    }

    @Test func payloadBodyChecks() {
        #expect(HeaderRules.checkPayload([UInt8](), pushType: .alert) == .payloadEmpty)
        #expect(HeaderRules.checkPayload(payload(bytes: 4096), pushType: .alert) == nil)
        #expect(HeaderRules.checkPayload(payload(bytes: 4097), pushType: .alert) == .payloadTooLarge)
        #expect(HeaderRules.checkPayload(payload(bytes: 5120), pushType: .voip) == nil)
        #expect(HeaderRules.checkPayload(payload(bytes: 5121), pushType: .voip) == .payloadTooLarge)
        #expect(HeaderRules.checkPayload(Array("[1]".utf8), pushType: .alert) == .invalidPayload)
    }
}

/// A JSON object of exactly `bytes` bytes: `{"a":"xxx…"}`.
func payload(bytes: Int) -> [UInt8] {
    Array(("{\"a\":\"" + String(repeating: "x", count: bytes - 8) + "\"}").utf8)
}
