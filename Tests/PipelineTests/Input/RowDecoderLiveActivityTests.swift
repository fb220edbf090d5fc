import APNs
import Testing
import TestSupport
@testable import Pipeline

/// ActivityKit's rules on `liveactivity` rows, whichever way a row gets that push type (its own
/// column or the run's), and on no other row.
@Suite struct RowDecoderLiveActivityTests {
    static let token = RowDecoderTests.token
    static let topic = "com.example.app.push-type.liveactivity"

    func decoded(_ csv: String, defaults: HeaderValues, defaultPayload: String? = nil) throws -> [RowDecoder.Decoded] {
        let directory = try TemporaryDirectory()
        let source = try CSVSource(path: try directory.write("c.csv", csv))
        let decoder = RowDecoder(defaults: defaults, defaultPayload: defaultPayload.map { Array($0.utf8) }, auth: .token)
        var out: [RowDecoder.Decoded] = []
        while let batch = try source.nextBatch() {
            for index in batch.indices { out.append(decoder.decode(batch, at: index)) }
        }
        return out
    }

    func rule(_ decoded: RowDecoder.Decoded) -> LiveActivityPayload.Rule? {
        if case .breaksLiveActivityRule(let rule) = decoded { rule } else { nil }
    }

    func sent(_ decoded: RowDecoder.Decoded) -> Bool {
        if case .send = decoded { true } else { false }
    }

    @Test func liveActivityRowsOfTheRunsPushTypeAreCheckedAndOthersAreNot() throws {
        let rows = try decoded("""
            device_token,payload,push_type,topic
            \(Self.token),"{""aps"":{""event"":""update"",""timestamp"":1,""content-state"":{}}}",,
            \(Self.token),"{""aps"":{""event"":""update"",""content-state"":{}}}",,
            \(Self.token),"{""aps"":{""event"":""begin"",""timestamp"":1}}",,
            \(Self.token),"{""aps"":{""event"":""begin""}}",alert,com.example.app
            \(Self.token),"{""aps"":{""event"":""start"",""timestamp"":1}}",,
            \(Self.token),not json,,

            """, defaults: HeaderValues(topic: Self.topic, pushType: "liveactivity"))
        #expect(sent(rows[0]))
        #expect(rule(rows[1]) == .timestamp)
        #expect(rule(rows[2]) == .event)
        #expect(sent(rows[3]), "an alert row's payload is not read for ActivityKit's rules")
        #expect(rule(rows[4]) == .startNeedsAttributesType)
        if case .rejected(let reason) = rows[5] { #expect(reason == "InvalidPayload") } else { Issue.record("\(rows[5])") }
    }

    @Test func aRowsOwnLiveActivityPushTypeBringsTheRulesToItsPayloadAndToTheRunsPayload() throws {
        let rows = try decoded("""
            device_token,payload,push_type,topic
            \(Self.token),"{""aps"":{""event"":""end"",""timestamp"":1,""input-push-channel"":""dHN0""}}",liveactivity,\(Self.topic)
            \(Self.token),,liveactivity,\(Self.topic)
            \(Self.token),,,

            """, defaults: HeaderValues(topic: "com.example.app"), defaultPayload: #"{"aps":{"alert":"hi"}}"#)
        #expect(rule(rows[0]) == .inputPushChannelOnlyOnStart)
        #expect(rule(rows[1]) == .event, "the run's payload has no Live Activity event")
        #expect(sent(rows[2]), "an alert row takes the run's payload as it is")
    }

    @Test func theRunsPayloadUnderTheRunsLiveActivityPushTypeIsReadOnce() throws {
        let rows = try decoded("""
            device_token
            \(Self.token)
            \(Self.token)

            """, defaults: HeaderValues(topic: Self.topic, pushType: "liveactivity"),
            defaultPayload: #"{"aps":{"event":"update","content-state":{}}}"#)
        #expect(rows.map(rule) == [.timestamp, .timestamp])
    }

    @Test func aLiveActivityRowWithoutTheTopicSuffixIsBadTopic() throws {
        let rows = try decoded("""
            device_token,payload,push_type,topic
            \(Self.token),"{""aps"":{""event"":""end"",""timestamp"":1}}",liveactivity,com.example.app
            \(Self.token),"{""aps"":{""event"":""end"",""timestamp"":1}}",liveactivity,\(Self.topic)

            """, defaults: HeaderValues(topic: "com.example.app"))
        if case .rejected(let reason) = rows[0] { #expect(reason == "BadTopic") } else { Issue.record("\(rows[0])") }
        #expect(sent(rows[1]))
    }
}
