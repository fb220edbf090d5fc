import Testing
@testable import APNs

/// The per-row readings the key router makes over bytes: an `environment` field and a topic's
/// bundle id, each the same as the string readings the command line and the rules use.
@Suite struct EnvironmentAndBundleTests {
    static func parse(_ text: String) -> APNsEnvironment? {
        Array(text.utf8).withUnsafeBufferPointer(APNsEnvironment.init(parsingBytes:))
    }

    @Test func environmentFieldsReadAsTheirNamesInAnyCaseAndSpacing() {
        for (text, expected) in [("production", APNsEnvironment.production), ("PRODUCTION", .production), (" Sandbox\t", .sandbox),
                                 ("development", .sandbox), ("DEVELOPMENT ", .sandbox)] {
            #expect(Self.parse(text) == expected, "\(text)")
            #expect(APNsEnvironment(parsing: text) == expected, "\(text)")
        }
        for text in ["", " ", "prod", "productions", "sandbox2", "staging", "sandböx", "PRODUCTİON"] {
            #expect(Self.parse(text) == nil, "\(text)")
            #expect(APNsEnvironment(parsing: text) == nil, "\(text)")
        }
    }

    @Test func aTopicsBundleIDIsItWithoutItsPushTypesSuffix() {
        for topic in ["com.example.app", "com.example.app.voip", "com.example.app.voip-ptt", "com.example.app.push-type.liveactivity",
                      "com.example.app.pushkit.fileprovider", ".voip", "voip", "a.complication", ""] {
            let length = Array(topic.utf8).withUnsafeBufferPointer(KeyDescription.bundleIDLength(ofTopic:))
            #expect(length == KeyDescription.bundleID(ofTopic: topic).utf8.count, "\(topic)")
        }
        #expect(PushType.suffixOwner(of: "com.example.app.voip-ptt") == .pushtotalk)
        #expect(PushType.suffixOwner(of: "com.example.app.voip") == .voip)
        #expect(PushType.suffixOwner(of: "com.example.app.voip"[...]) == .voip)
        #expect(PushType.suffixOwner(of: "com.example.app") == nil)
    }
}
