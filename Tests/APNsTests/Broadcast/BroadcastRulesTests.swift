import APNs
import Testing

/// Apple's broadcast and channel-management rules as values (docs/apns.md, "Live Activity
/// broadcast and channel management").
@Suite struct BroadcastRulesTests {
    @Test func channelIDsAreBase64OfAnyLength() {
        for id in ["dGVzdA==", "dGVzdDE=", "dGVzdDEy", "AAAA", "ab+/cd09"] {
            #expect(BroadcastRules.checkChannelID(id) == nil, "\(id)")
        }
        #expect(BroadcastRules.checkChannelID(nil as String?) == .missingChannelId)
        #expect(BroadcastRules.checkChannelID("") == .missingChannelId)
        for id in ["dGVzdA=", "dGVz dA==", "dG=VzdA=", "dGVzdA===", "-_-_", "====", "dGVzdA==\n"] {
            #expect(BroadcastRules.checkChannelID(id) == .badChannelId, "\(id)")
        }
    }

    @Test func theBroadcastPushTypeIsAcceptedInApplesThreeSpellingsOnly() {
        for spelling in ["liveactivity", "Liveactivity", "LiveActivity"] { #expect(BroadcastRules.checkPushType(spelling) == nil) }
        #expect(BroadcastRules.checkPushType(nil as String?) == .missingPushType)
        for other in ["LIVEACTIVITY", "alert", ""] { #expect(BroadcastRules.checkPushType(other) == .invalidPushType, "\(other)") }
    }

    @Test func expirationIsRequiredAndAPolicyDecidesWhetherItMayBeNonzero() {
        #expect(BroadcastRules.checkExpiration(nil) == .badExpirationDate)
        #expect(BroadcastRules.checkExpiration("0") == nil)
        #expect(BroadcastRules.checkExpiration("-1") == .badExpirationDate)
        #expect(ChannelStoragePolicy.noMessageStored.accepts(expiration: 0))
        #expect(!ChannelStoragePolicy.noMessageStored.accepts(expiration: 1_700_000_000))
        #expect(ChannelStoragePolicy.mostRecentMessageStored.accepts(expiration: 1_700_000_000))
        #expect(ChannelStoragePolicy.noMessageStored.channelJSON == #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
    }

    @Test func payloadsAreJSONObjectsOfAtMost5120Bytes() {
        #expect(BroadcastRules.checkPayload([UInt8]()) == .payloadEmpty)
        #expect(BroadcastRules.checkPayload(Array("[]".utf8)) == .badRequestPayload)
        #expect(BroadcastRules.checkPayload(Array(#"{"aps":{}}"#.utf8)) == nil)
        let large = Array("{\"a\":\"\(String(repeating: "x", count: 5113))\"}".utf8)
        #expect(large.count == 5121)
        #expect(BroadcastRules.checkPayload(large) == .payloadTooLarge)
        let largest = Array("{\"a\":\"\(String(repeating: "x", count: 5112))\"}".utf8)
        #expect(largest.count == 5120)
        #expect(BroadcastRules.checkPayload(largest) == nil)
    }

    @Test func aPushTypeSuffixMarksABundleIDBroadcastsRefuse() {
        #expect(BroadcastRules.hasPushTypeSuffix("com.example.app.push-type.liveactivity"))
        #expect(BroadcastRules.hasPushTypeSuffix("com.example.app.voip"))
        #expect(!BroadcastRules.hasPushTypeSuffix("com.example.app"))
        #expect(!BroadcastRules.hasPushTypeSuffix(".voip"))
    }

    @Test func hostsAndPathsAreApples() {
        let production = BroadcastEndpoints.managementHost(.production), sandbox = BroadcastEndpoints.managementHost(.sandbox)
        #expect(production.host == "api-manage-broadcast.push.apple.com" && production.port == 2196)
        #expect(sandbox.host == "api-manage-broadcast.sandbox.push.apple.com" && sandbox.port == 2195)
        #expect(BroadcastEndpoints.broadcastHost(.sandbox).host == "api.sandbox.push.apple.com")
        #expect(BroadcastEndpoints.broadcastPath(bundleID: "com.example.app") == "/4/broadcasts/apps/com.example.app")
        #expect(BroadcastEndpoints.channelsPath(bundleID: "com.example.app") == "/1/apps/com.example.app/channels")
        #expect(BroadcastEndpoints.allChannelsPath(bundleID: "com.example.app") == "/1/apps/com.example.app/all-channels")
    }
}
