import ByteScan
@testable import APNs
import Testing

/// `LiveActivityScan` (the rules read in the validator's own pass, `send`'s rows) reads every
/// payload as `LiveActivityPayload(buffer:)`'s walk does, and the scan it rides on gives the same
/// verdict as `JSONValidator.validate`: over the walk tests' edges, each spaced out, cut and bent,
/// and over random documents built from the names the rules read.
@Suite struct LiveActivityScanTests {
    /// The walk tests' and the rules tests' payloads: nested look-alike keys, strings that look like
    /// members, escapes, repeated keys, null values, non-object and repeated `aps`, numbers of every shape.
    static let corpus: [String] = [
        #"{"aps":{"timestamp":1700000000,"event":"start","content-state":{"score":"0-0"},"attributes-type":"MatchAttributes","#
            + #""attributes":{"home":"A","away":"B"},"alert":{"title":"Kick-off","body":"A v B"},"input-push-channel":"dHN0LXNyY2gtY2hubA=="}}"#,
        #"{"aps":{"timestamp":1700000060,"event":"update","content-state":{"score":"1-0"},"stale-date":1700003600}}"#,
        #"{"aps":{"timestamp":1700005400,"event":"end","content-state":{"score":"2-1"},"dismissal-date":1700009000}}"#,
        #"{"aps":{"event":"update","content-state":{"timestamp":1,"event":"start"}}}"#,
        #"{"aps":{"event":"end","timestamp":1,"content-state":{"input-push-channel":"dHN0"}}}"#,
        #"{"aps":{"event":"start","alert":"Go","content-state":{"attributes-type":"T","attributes":{},"x":[{"attributes-type":"T"}]}}}"#,
        #"{"aps":{"event":"update","alert":{"event":"end","timestamp":1}}}"#,
        #"{"aps":{"content-state":{"aps":{"event":"end"}},"timestamp":1}}"#,
        #"{"aps":{"event":"update","content-state":{"note":"\",\"timestamp\":1,\""}}}"#,
        #"{"aps":{"alert":"\"event\":\"start\"","event":"end","timestamp":1}}"#,
        #"{"note":"{\"aps\":{\"event\":\"end\",\"timestamp\":1}}"}"#,
        #"{"aps":{"event":"update","content-state":{"s":"a\\"},"timestamp":1}}"#,
        #"{"a":{"aps":{"event":"start"}},"aps":{"event":"end","timestamp":1},"b":{"aps":1}}"#,
        #"{"aps":{"event":"end","timestamp":1},"data":[{"aps":{"event":"bogus"}}]}"#,
        #"{"list":["aps",{"aps":{}}],"aps":{"event":"update","timestamp":2}}"#,
        #"{"list":["event","update",{"timestamp":1}],"aps":{"event":"update"}}"#,
        #"{"aps":{"list":["event","start"],"event":"end","x":["end"],"timestamp":[1]}}"#,
        #"{"\u0061ps":{"event":"end","timestamp":1}}"#,
        #"{"aps":{"event":"end","\u0074imestamp":1}}"#,
        #"{"aps":{"event":"start","attributes\u002dtype":"T","attributes":{},"\u0061lert":"Go"}}"#,
        #"{"aps":{"event":"end","time\"stamp":1}}"#,
        #"{"aps":{"event":"end","timestamp\n":1}}"#,
        #"{"ap\u0073\u0000":{"event":"end","timestamp":1}}"#,
        #"{"aps":{"timestamp":1,"event":"upd\u0061te"}}"#,
        #"{"aps":{"timestamp":1,"\u0065vent":"end"}}"#,
        #"{"aps":{"timestamp":1,"event":"\ud83d\ude00"}}"#,
        #"{"aps":{"event":"end","timestamp":1},"aps":null}"#,
        #"{"aps":1,"aps":{"event":"end","timestamp":1}}"#,
        #"{"aps":{"event":"end","timestamp":1},"aps":{"event":"update"}}"#,
        #"{"aps":{"event":"end","timestamp":1,"event":null}}"#,
        #"{"aps":{"event":"end","timestamp":1,"event":"start","alert":"Go"}}"#,
        #"{"aps":{"event":"start","attributes-type":"T","attributes":{},"alert":"Go","alert":null}}"#,
        #"{"aps":{"event":"end","timestamp":1,"input-push-channel":"x","input-push-channel":null}}"#,
        #"{"aps":{"event":"start","event":"end","timestamp":1}}"#,
        #"{"aps":{"event":"end","timestamp":1,"timestamp":"x"}}"#,
        #"{"aps":{"timestamp":1,"event":"Update"}}"#, #"{"aps":{"timestamp":1,"event":1}}"#,
        #"{"aps":{"event":"update","input-push-channel":"x","timestamp":-1.5e3}}"#,
        #"{"aps":{"event":"start","attributes-type":7,"attributes":"A","alert":true}}"#,
        #"{"aps":[{"event":"end"}]}"#, #"{"aps":"update"}"#, #"{"aps":null}"#, #"{"aps":{}}"#, #"{}"#,
        #"{"event":"update","timestamp":1}"#,
        #"{"x":[1,{"aps":{"event":"bad"}},"}]\"{"],"aps":{"content-state":{"event":"start","t":[{"a":"\"}"}]},"#
            + #""relevance-score":0.5, "event" : "update" ,"flag":true,"n":null,"timestamp":-1e3},"y":"z"}"#,
        #"{"aps":{"timestamp":1700000001,"event":"update","content-state":{"status":"Row 1 abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyza","#
            + #""eta":12},"alert":{"title":"Campaign 🎉","body":"Score 1-0"}}}"#,
    ]

    /// Checks `bytes` both ways: the scan's verdict is the validator's (with both block kinds), and
    /// for JSON its payload is the walk's.
    static func check(_ bytes: [UInt8], _ comment: @autoclosure () -> String) {
        bytes.withUnsafeBufferPointer { buffer in
            let expected = JSONValidator.validate(buffer: buffer)
            var native = LiveActivityScan(bytes: buffer)
            var portable = LiveActivityScan(bytes: buffer)
            #expect(JSONValidator.validate(buffer: buffer, observing: &native, using: NativeBlocks.self) == expected, "\(comment())")
            #expect(JSONValidator.validate(buffer: buffer, observing: &portable, using: SWARBlocks.self) == expected, "\(comment())")
            guard expected == nil else { return }
            let walked = LiveActivityPayload(buffer: buffer)
            #expect(native.payload == walked && portable.payload == walked, "\(comment())")
        }
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theScanReadsTheCorpusAsTheWalkDoes() {
        for json in Self.corpus {
            Self.check(Array(json.utf8), json)
            for space in [" ", "\n", "\t", "\r\n \t"] {
                let spaced = space + LiveActivityPayloadWalkTests.spacedOut(json, with: space) + space
                Self.check(Array(spaced.utf8), spaced)
            }
        }
    }

    @Test func cutAndBentPayloadsGetTheValidatorsVerdict() {
        for json in Self.corpus {
            let bytes = Array(json.utf8)
            for length in 0..<bytes.count { Self.check(Array(bytes[..<length]), "cut at \(length): \(json)") }
            for k in bytes.indices {
                for byte in Array(#""}],:\ n0{["#.utf8) where byte != bytes[k] {
                    var bent = bytes
                    bent[k] = byte
                    Self.check(bent, Self.text(bent))
                }
            }
        }
    }

    @Test func randomDocumentsOfTheRulesNamesReadAlike() {
        var generator = Xorshift(state: 0x9E37_79B9_7F4A_7C15)
        var valid = 0
        for _ in 0..<20_000 {
            var out = ""
            Self.object(depth: 0, into: &out, &generator)
            let bytes = Array(out.utf8)
            Self.check(bytes, out)
            if JSONValidator.isJSONObject(bytes) { valid += 1 }
        }
        #expect(valid == 20_000, "every generated document is JSON")
    }

    @Test func theRowEntryReadsAPayloadInPlaceAsValidateThenWalk() {
        for json in Self.corpus + ["", "{", #"{"aps":{"event":"end""#, "[1]", String(repeating: " ", count: 5000)] {
            // The payload amid other bytes, as a CSV batch's field is.
            let storage = Array("x,\(json),y".utf8)
            let range = 2..<(storage.count - 2)
            var payload: LiveActivityPayload?
            let rejection = NotificationHeaders.payloadRejection(storage, in: range, liveActivity: &payload)
            let expected = NotificationHeaders.payloadRejection(storage, in: range, pushType: .liveactivity)
            #expect(rejection == expected, "\(json)")
            let walked = storage.withUnsafeBufferPointer { LiveActivityPayload(buffer: UnsafeBufferPointer(rebasing: $0[range])) }
            #expect(payload == (expected == nil ? walked : nil), "\(json)")
        }
    }

    static let keys = ["aps", "aps", "event", "event", "timestamp", "attributes-type", "attributes", "alert",
                       "input-push-channel", "content-state", "x", #"\u0061ps"#, #"ev\u0065nt"#, #"time\"stamp"#,
                       "apsx", "alerts", "Event", "a-key-longer-than-one-block-of-sixteen-bytes"]
    static let strings = ["start", "update", "end", #"st\u0061rt"#, "bogus", "", "aps", "event",
                          "a string that runs past a block: 🎉 and \\\" quotes", "\\u00e9nd"]

    static func space(_ out: inout String, _ generator: inout Xorshift) {
        switch generator.next() % 8 {
        case 0: out += " "
        case 1: out += "\n\t "
        default: break
        }
    }

    static func object(depth: Int, into out: inout String, _ generator: inout Xorshift) {
        out += "{"
        let count = Int(generator.next() % (depth == 0 ? 5 : 4))
        for member in 0..<count {
            if member > 0 { out += "," }
            space(&out, &generator)
            out += "\"" + keys[Int(generator.next() % UInt64(keys.count))] + "\""
            space(&out, &generator)
            out += ":"
            space(&out, &generator)
            value(depth: depth + 1, into: &out, &generator)
            space(&out, &generator)
        }
        out += "}"
    }

    static func value(depth: Int, into out: inout String, _ generator: inout Xorshift) {
        switch generator.next() % (depth < 4 ? 8 : 6) {
        case 0, 1: out += "\"" + strings[Int(generator.next() % UInt64(strings.count))] + "\""
        case 2: out += ["1700000000", "-1.5e3", "0", "12.25"][Int(generator.next() % 4)]
        case 3: out += "null"
        case 4: out += generator.next() % 2 == 0 ? "true" : "false"
        case 5: out += "[]"
        case 6:
            out += "["
            value(depth: depth + 1, into: &out, &generator)
            out += ","
            object(depth: depth + 1, into: &out, &generator)
            out += "]"
        default: object(depth: depth, into: &out, &generator)
        }
    }
}
