import Testing
@testable import APNs

/// The edges of reading `aps` in one walk (`LiveActivityPayload(buffer:)`, `JSONMembers`): only the
/// top level's `aps` and only `aps`'s own members count, whatever nests inside them or however the
/// bytes are spaced, escaped or repeated.
@Suite struct LiveActivityPayloadWalkTests {
    typealias Rule = LiveActivityPayload.Rule

    func rule(_ json: String, _ route: LiveActivityPayload.Route = .deviceToken) -> Rule? {
        #expect(JSONValidator.isJSONObject(Array(json.utf8)), "the test's payload is JSON: \(json)")
        return LiveActivityPayload(json: Array(json.utf8)).brokenRule(route: route)
    }

    @Test func keysNestedInsideAPSMembersAreNotAPSKeys() {
        #expect(rule(#"{"aps":{"event":"update","content-state":{"timestamp":1,"event":"start"}}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1,"content-state":{"input-push-channel":"dHN0"}}}"#) == nil)
        let startWithNestedKeys = #"{"aps":{"event":"start","alert":"Go","content-state":{"attributes-type":"T","#
            + #""attributes":{},"x":[{"attributes-type":"T"}]}}}"#
        #expect(rule(startWithNestedKeys) == .startNeedsAttributesType)
        #expect(rule(#"{"aps":{"event":"update","alert":{"event":"end","timestamp":1}}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"content-state":{"aps":{"event":"end"}},"timestamp":1}}"#) == .event)
    }

    @Test func stringsThatLookLikeMembersAreText() {
        #expect(rule(#"{"aps":{"event":"update","content-state":{"note":"\",\"timestamp\":1,\""}}}"#) == .timestamp)
        #expect(rule(#"{"aps":{"alert":"\"event\":\"start\"","event":"end","timestamp":1}}"#) == nil)
        #expect(rule(#"{"note":"{\"aps\":{\"event\":\"end\",\"timestamp\":1}}"}"#) == .apsObject)
        #expect(rule(#"{"aps":{"event":"update","content-state":{"s":"}}}"},"timestamp":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"update","content-state":{"s":"a\\"},"timestamp":1}}"#) == nil,
                "an escaped backslash does not escape the quote after it")
    }

    @Test func onlyTheTopLevelAPSCountsWhereverItStands() {
        #expect(rule(#"{"a":{"aps":{"event":"start"}},"aps":{"event":"end","timestamp":1},"b":{"aps":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1},"data":[{"aps":{"event":"bogus"}}]}"#) == nil)
        #expect(rule(#"{"list":["aps",{"aps":{}}],"aps":{"event":"update","timestamp":2}}"#) == nil)
    }

    @Test func escapedKeysAreReadAsTheirText() {
        #expect(rule(#"{"\u0061ps":{"event":"end","timestamp":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"end","\u0074imestamp":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"start","attributes\u002dtype":"T","attributes":{},"\u0061lert":"Go"}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"end","time\"stamp":1}}"#) == .timestamp, "a key with an escaped quote is another key")
        #expect(rule(#"{"aps":{"event":"end","timestamp\n":1}}"#) == .timestamp)
        #expect(rule(#"{"ap\u0073\u0000":{"event":"end","timestamp":1}}"#) == .apsObject)
    }

    @Test func aKeyGivenTwiceCountsAsGivenLastAtEachLevel() {
        #expect(rule(#"{"aps":{"event":"end","timestamp":1},"aps":null}"#) == .apsObject)
        #expect(rule(#"{"aps":1,"aps":{"event":"end","timestamp":1}}"#) == nil)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1},"aps":{"event":"update"}}"#) == .timestamp,
                "the later aps replaces the earlier one whole")
        #expect(rule(#"{"aps":{"event":"end","timestamp":1,"event":null}}"#) == .event)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1,"event":"start","alert":"Go"}}"#) == .startNeedsAttributesType)
        #expect(rule(#"{"aps":{"event":"start","attributes-type":"T","attributes":{},"alert":"Go","alert":null}}"#) == .startNeedsAlert)
        #expect(rule(#"{"aps":{"event":"end","timestamp":1,"input-push-channel":"x","input-push-channel":null}}"#) == nil)
    }

    @Test func whitespaceAnywhereBetweenTokensReadsAlike() {
        let payloads = [
            #"{"aps":{"timestamp":1700000000,"event":"start","content-state":{"score":"0-0"},"attributes-type":"M","#
                + #""attributes":{"home":"A"},"alert":{"title":"Kick-off"},"input-push-channel":"dHN0"}}"#,
            #"{"aps":{"timestamp":1700000060,"event":"update","content-state":{"score":[1,0]},"stale-date":1}}"#,
            #"{"aps":{"event":"end","content-state":{}},"x":[]}"#,
            #"{"aps":{"event":"update","input-push-channel":"x","timestamp":-1.5e3}}"#,
            #"{"aps":{"event":"start","attributes-type":"M","attributes":{}}}"#,
            #"{"aps":[{"event":"end"}]}"#,
            #"{"aps":{}}"#,
            #"{}"#,
        ]
        for json in payloads {
            let expected = rule(json)
            for space in [" ", "\n", "\t", "\r\n \t"] {
                let spaced = space + Self.spacedOut(json, with: space) + space
                #expect(rule(spaced) == expected, "\(spaced)")
            }
        }
    }

    @Test func stringsOfEveryLengthAndEscapeOffsetAreSkippedWhole() {
        // Strings ending, or escaping a quote, at every offset of the 16-byte blocks the walk reads.
        for length in 0...40 {
            let plain = String(repeating: "a", count: length)
            for json in [#"{"aps":{"event":"update","content-state":{"s":"\#(plain)"},"timestamp":1}}"#,
                         #"{"aps":{"content-state":"\#(plain)\"\#(plain)\\","event":"update","timestamp":1}}"#,
                         #"{"\#(plain)":"\#(plain)\u0022","aps":{"event":"end","\#(plain)":1,"timestamp":1}}"#,
                         #"{"aps":{"event":"end","timestamp":1,"x":"\#(plain)\"}"}}"#] {
                #expect(rule(json) == nil, "\(json)")
            }
            #expect(rule(#"{"aps":{"event":"update","s":"\#(plain)\",\"timestamp\":1"}}"#) == .timestamp, "\(length)")
        }
    }

    @Test func anAPSTheBytesCutIsNoAPS() {
        for text in [#"{"aps":{"event":"end","timestamp":1"#, #"{"aps":{"event":"end","timestamp":1,"x":"y"#,
                     #"{"aps":{"event":"end","timestamp":1,"#, #"{"aps":{"event":"end","timestamp":1 x}"#,
                     #"{"aps":{"event":"end","timestamp":1},"aps":{"event":"end""#] {
            let bytes = Array(text.utf8)
            let payload = bytes.withUnsafeBufferPointer { LiveActivityPayload(buffer: $0) }
            #expect(!payload.hasAPS && payload.brokenRule(route: .deviceToken) == .apsObject, "\(text)")
        }
    }

    @Test func aNameIsEqualOnlyToItsOwnBytesWhateverItsLength() {
        let names: [StaticString] = ["", "a", "ap", "aps", "end", "alert", "update", "payload", "timestamp",
                                     "attributes", "content-state", "attributes-type", "attributes-types",
                                     "input-push-channel"]
        for name in names {
            let bytes = name.withUTF8Buffer { Array($0) }
            bytes.withUnsafeBufferPointer { #expect(JSONMembers.equal($0, name), "\(name)") }
            for k in bytes.indices {
                var other = bytes
                other[k] ^= 0x20
                other.withUnsafeBufferPointer { #expect(!JSONMembers.equal($0, name), "\(name) byte \(k)") }
            }
            (bytes + [0x61]).withUnsafeBufferPointer { #expect(!JSONMembers.equal($0, name), "\(name) and one more") }
            bytes.dropLast().withUnsafeBufferPointer { #expect(!JSONMembers.equal($0, name) || bytes.isEmpty, "\(name) cut") }
        }
    }

    /// `json` with `space` after every `{ [ : , } ]` outside strings, and before every `} ] : ,`.
    static func spacedOut(_ json: String, with space: String) -> String {
        var out = ""
        var inString = false
        var escaped = false
        for character in json {
            if inString {
                out.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            switch character {
            case "\"": inString = true; out.append(character)
            case "{", "[": out += String(character) + space
            case "}", "]", ":", ",": out += space + String(character) + space
            default: out.append(character)
            }
        }
        return out
    }
}
