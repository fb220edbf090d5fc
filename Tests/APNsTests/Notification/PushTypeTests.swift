import APNs
import Testing

@Suite struct PushTypeTests {
    static let bundle = "com.example.app"

    @Test func elevenPushTypesWithTheirSuffixesFromAPNSmd() {
        let expected: [PushType: String?] = [
            .alert: nil, .background: nil, .mdm: nil,
            .location: ".location-query", .voip: ".voip", .complication: ".complication",
            .fileprovider: ".pushkit.fileprovider", .liveactivity: ".push-type.liveactivity",
            .pushtotalk: ".voip-ptt", .widgets: ".push-type.widgets", .controls: ".push-type.controls",
        ]
        #expect(PushType.allCases.count == 11)
        for type in PushType.allCases {
            #expect(type.topicSuffix == expected[type] ?? nil, "\(type)")
        }
    }

    @Test func headerValuesAreTheExactLowercaseNames() {
        let names = ["alert", "background", "location", "voip", "complication", "fileprovider",
                     "mdm", "liveactivity", "pushtotalk", "widgets", "controls"]
        #expect(PushType.allCases.map(\.headerValue) == names)
        for name in names { #expect(PushType(headerValue: name)?.headerValue == name) }
        for bad in ["", "Alert", "ALERT", "alert ", "foo", "push-to-talk", "live-activity"] {
            #expect(PushType(headerValue: bad) == nil, "\(bad)")
        }
    }

    @Test(arguments: PushType.allCases)
    func eachPushTypeAcceptsOnlyItsOwnSuffix(type: PushType) {
        for other in PushType.allCases {
            guard let suffix = other.topicSuffix else { continue }
            let topic = Self.bundle + suffix
            #expect(type.accepts(topic: topic) == (type == other || type == .mdm), "\(type) with \(topic)")
        }
        let bareAccepted = type.topicSuffix == nil
        #expect(type.accepts(topic: Self.bundle) == bareAccepted)
        #expect(!type.accepts(topic: ""))
        if let suffix = type.topicSuffix {
            #expect(!type.accepts(topic: suffix), "a suffix alone names no app")
        }
    }

    @Test func mdmAcceptsAnyTopic() {
        #expect(PushType.mdm.accepts(topic: "com.apple.mgmt.External.0b6e2b6c-1111-4f3a-9ad5-2b0f5d2a9c11"))
    }

    @Test func priorityParsesOnlyTenFiveAndOne() {
        #expect(Priority(headerValue: "10") == .immediate)
        #expect(Priority(headerValue: "5") == .powerConsidered)
        #expect(Priority(headerValue: "1") == .low)
        for bad in ["", "7", "0", "05", "010", "10 ", "100", "-1", "high"] {
            #expect(Priority(headerValue: bad) == nil, "\(bad)")
        }
        #expect(Priority.allCases.map(\.headerValue) == ["10", "5", "1"])
    }

    @Test func backgroundDefaultsToAndRequiresPriorityFive() {
        #expect(Priority.defaultPriority(for: .background) == .powerConsidered)
        #expect(Priority.defaultPriority(for: .alert) == .immediate)
        #expect(Priority.powerConsidered.isAllowed(for: .background))
        #expect(!Priority.immediate.isAllowed(for: .background))
        #expect(!Priority.low.isAllowed(for: .background))
        #expect(Priority.low.isAllowed(for: .alert))
    }

    @Test func limitsAreTheDocumentedSizes() {
        #expect(Limits.payloadBytes == 4096)
        #expect(Limits.voipPayloadBytes == 5120)
        #expect(Limits.payloadBytes(for: .voip) == 5120)
        #expect(Limits.payloadBytes(for: .pushtotalk) == 4096)
        #expect(Limits.collapseIDBytes == 64)
        #expect(Limits.deviceTokenBytes == 100)
        #expect(Limits.csvFieldBytes == 65536)
    }
}
