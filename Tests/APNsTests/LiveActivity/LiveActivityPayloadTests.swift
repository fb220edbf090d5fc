import Foundation
import Testing
@testable import APNs

@Suite struct LiveActivityPayloadTests {
    typealias Rule = LiveActivityPayload.Rule

    static let start = #"{"aps":{"timestamp":1700000000,"event":"start","content-state":{"score":"0-0"},"#
        + #""attributes-type":"MatchAttributes","attributes":{"home":"A","away":"B"},"#
        + #""alert":{"title":"Kick-off","body":"A v B"},"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}"#
    static let update = #"{"aps":{"timestamp":1700000060,"event":"update","content-state":{"score":"1-0"},"stale-date":1700003600}}"#
    static let end = #"{"aps":{"timestamp":1700005400,"event":"end","content-state":{"score":"2-1"},"dismissal-date":1700009000}}"#

    func rule(_ json: String, _ route: LiveActivityPayload.Route = .deviceToken) -> Rule? {
        #expect(JSONValidator.isJSONObject(Array(json.utf8)), "the test's payload is JSON: \(json)")
        return LiveActivityPayload(json: Array(json.utf8)).brokenRule(route: route)
    }

    @Test func aStartAnUpdateAndAnEndThatKeepTheRulesPass() {
        #expect(rule(Self.start) == nil)
        #expect(rule(Self.update) == nil)
        #expect(rule(Self.end) == nil)
        #expect(LiveActivityPayload(json: Array(Self.start.utf8)).event == .start)
        #expect(LiveActivityPayload(json: Array(Self.end.utf8)).event == .end)
    }

    @Test func aPayloadWithoutAnAPSObjectBreaksTheAPSRule() {
        #expect(rule(#"{"event":"update","timestamp":1}"#) == .apsObject)
        #expect(rule(#"{"aps":"update"}"#) == .apsObject)
        #expect(rule(#"{"aps":null}"#) == .apsObject)
        #expect(rule(#"{"data":{"aps":{"event":"update","timestamp":1}}}"#) == .apsObject, "only the top level's aps counts")
    }

    @Test func theEventMustBeStartUpdateOrEnd() {
        #expect(rule(#"{"aps":{"timestamp":1}}"#) == .event)
        #expect(rule(#"{"aps":{"timestamp":1,"event":"begin"}}"#) == .event)
        #expect(rule(#"{"aps":{"timestamp":1,"event":"Update"}}"#) == .event, "the names are lowercase")
        #expect(rule(#"{"aps":{"timestamp":1,"event":"update "}}"#) == .event)
        #expect(rule(#"{"aps":{"timestamp":1,"event":1}}"#) == .event)
        #expect(rule(#"{"aps":{"timestamp":1,"event":null}}"#) == .event)
        #expect(rule(#"{"aps":{"timestamp":1,"event":"upd\u0061te"}}"#) == nil, "escapes are decoded")
        #expect(rule(#"{"aps":{"timestamp":1,"\u0065vent":"end"}}"#) == nil, "in keys too")
    }

    @Test func aStartNeedsAttributesTypeAttributesAndAlert() {
        let withoutType = Self.start.replacingOccurrences(of: #""attributes-type":"MatchAttributes","#, with: "")
        #expect(rule(withoutType) == .startNeedsAttributesType)
        let typeNotAString = Self.start.replacingOccurrences(of: #""MatchAttributes""#, with: "7")
        #expect(rule(typeNotAString) == .startNeedsAttributesType)
        let withoutAttributes = Self.start.replacingOccurrences(of: #""attributes":{"home":"A","away":"B"},"#, with: "")
        #expect(rule(withoutAttributes) == .startNeedsAttributes)
        let attributesNotAnObject = Self.start.replacingOccurrences(of: #"{"home":"A","away":"B"}"#, with: #""A v B""#)
        #expect(rule(attributesNotAnObject) == .startNeedsAttributes)
        let withoutAlert = Self.start.replacingOccurrences(of: #""alert":{"title":"Kick-off","body":"A v B"},"#, with: "")
        #expect(rule(withoutAlert) == .startNeedsAlert)
        let alertNull = Self.start.replacingOccurrences(of: #"{"title":"Kick-off","body":"A v B"}"#, with: "null")
        #expect(rule(alertNull) == .startNeedsAlert)
        let alertString = Self.start.replacingOccurrences(of: #"{"title":"Kick-off","body":"A v B"}"#, with: #""Kick-off""#)
        #expect(rule(alertString) == nil, "a string alert is an alert")
        #expect(rule(#"{"aps":{"event":"start"}}"#) == .startNeedsAttributesType, "the first rule broken is named")
    }

    @Test func inputPushChannelBelongsOnAStartOnly() {
        let updateWithChannel = #"{"aps":{"timestamp":1,"event":"update","content-state":{},"input-push-channel":"dHN0"}}"#
        #expect(rule(updateWithChannel) == .inputPushChannelOnlyOnStart)
        let endWithChannel = #"{"aps":{"timestamp":1,"event":"end","input-push-channel":"dHN0"}}"#
        #expect(rule(endWithChannel) == .inputPushChannelOnlyOnStart)
        #expect(rule(#"{"aps":{"timestamp":1,"event":"end","input-push-channel":null}}"#) == nil, "null is not given")
        let startWithoutChannel = Self.start.replacingOccurrences(of: #","input-push-channel":"dHN0LXNyY2gtY2hubA==""#, with: "")
        #expect(rule(startWithoutChannel) == nil, "a start may go without a channel")
    }

    @Test func anUpdateOrAnEndNeedsANumericTimestamp() {
        #expect(rule(#"{"aps":{"event":"update","content-state":{}}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"event":"end"}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"event":"update","timestamp":"1700000000"}}"#) == .timestamp, "a string is no timestamp")
        #expect(rule(#"{"aps":{"event":"update","timestamp":1700000000.5}}"#) == nil)
        let startWithoutTimestamp = Self.start.replacingOccurrences(of: #""timestamp":1700000000,"#, with: "")
        #expect(rule(startWithoutTimestamp) == nil, "Apple asks it of updates and ends")
    }

    @Test func aBroadcastCannotStartAnActivity() {
        #expect(rule(Self.start, .broadcast) == .broadcastCannotStart)
        #expect(rule(#"{"aps":{"event":"start"}}"#, .broadcast) == .broadcastCannotStart, "before what a start needs")
        #expect(rule(Self.update, .broadcast) == nil)
        #expect(rule(Self.end, .broadcast) == nil)
    }

    @Test func aKeyGivenTwiceCountsAsGivenLast() {
        #expect(rule(#"{"aps":{"event":"start","event":"end","timestamp":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1,"timestamp":"x"}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1},"aps":{"event":"end"}}"#) == .timestamp)
    }

    @Test func otherMembersOfAnyShapeAreSkipped() {
        let json = #"{"x":[1,{"aps":{"event":"bad"}},"}]\"{"],"aps":{"content-state":{"event":"start","t":[{"a":"\"}"}]},"#
            + #""relevance-score":0.5, "event" : "update" ,"flag":true,"n":null,"timestamp":-1e3},"y":"z"}"#
        #expect(rule(json) == nil)
    }

    @Test func theRejectionIsInvalidPayloadWithTheRuleAsItsDetail() throws {
        let rejection = try #require(LiveActivityPayload(json: Array(#"{"aps":{"event":"update"}}"#.utf8)).rejection(route: .deviceToken))
        #expect(rejection.reason == .invalidPayload)
        #expect(rejection.detail.contains("aps.timestamp"))
        for rule in Rule.allCases { #expect(!rule.detail.isEmpty && !rule.detail.contains("\n")) }
    }

    @Test func bytesThatAreNotJSONAreReadWithoutReadingPastThem() {
        for text in ["", "{", #"{"aps""#, #"{"aps":{"event":"sta"#, #"{"aps":{"event":"start","attributes":{"#, "[1]", #"{"aps":{"\"#,
                     #"{"aps":{"event":"\u00"}}"#, #"{"aps":{"event":"\ud800"}}"#] {
            let bytes = Array(text.utf8)
            // Exactly the bytes given, nothing after them: an overread would trip the sanitizers.
            let rule = bytes.withUnsafeBufferPointer { LiveActivityPayload(buffer: $0).brokenRule(route: .deviceToken) }
            #expect(rule != nil, "\(text)")
        }
    }
}
