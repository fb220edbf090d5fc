import Foundation
import Testing
import TestSupport

/// Issue 14 item 7: `--payload-template` fills `{{column}}` placeholders from each row's columns,
/// escaped as JSON string text; what APNs (the real mock, recording payloads) receives is checked.
@Suite(.serialized) struct SendTemplateTests {
    typealias Rig = SendCampaignTests.Rig

    static let template = #"{"aps":{"alert":{"title":"Hi {{ first_name }}","body":"From {{CITY}}: \"{{first_name}}\""}},"t":"{{topic}}"}"#

    /// Payloads the mock received, by device token.
    static func payloads(_ mock: MockServerProcess) throws -> [String: [String: Any]] {
        var byToken: [String: [String: Any]] = [:]
        for request in try mock.records() {
            let text = try #require(request["payload"] as? String, "the mock records payloads")
            byToken[request["device_token"] as? String ?? ""] =
                try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        }
        return byToken
    }

    /// `send --payload-template` to a mock server that records payloads, stopped when it returns.
    static func send(_ rig: Rig, input csv: String, template: String) throws -> (CampaignRun, MockServerProcess) {
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--record-payloads"])
        let out = rig.scratch.path("out")
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out)
                                    + ["--payload-template", template])
        mock.stop()
        return (CampaignRun(result: result, outDirectory: out), mock)
    }

    static func tokens(_ count: Int) -> [String] {
        (1...count).map { String(repeating: String(format: "%02x", $0), count: 32) }
    }

    @Test(arguments: [false, true])
    func eachRowsPayloadIsTheTemplateFilledFromItsColumnsEscapedAsJSONText(fromJobFile: Bool) throws {
        let rig = try Rig(rows: 1)
        let t = Self.tokens(4)
        // Quotes, a backslash, a newline and a tab inside a quoted field, Unicode, a column no
        // other part of send reads (first_name), another in mixed case (City), a known one (topic),
        // and a row with its own payload, which wins.
        let csv = try rig.scratch.write("c.csv", """
            device_token,first_name,City,topic,payload
            \(t[0]),"Zoë ""Z"" \\o/","Line 1
            Line 2\tend",,
            \(t[1]),Bob,París 🎉,\(MockServerProcess.topic),
            \(t[2]),Ann,Oslo,,"{""own"":true}"
            \(t[3]),,,,

            """)
        let template = try rig.scratch.write("t.json", Self.template)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--record-payloads"])
        let out = rig.scratch.path("out")
        let extra = fromJobFile
            ? ["--config", try rig.scratch.write("job.toml", "payload-template = \"\(template)\"\n")]
            : ["--payload-template", template]
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out) + extra)
        mock.stop()
        #expect(result.status == 0, "\(result.stderr)")
        try CampaignRun(result: result, outDirectory: out).checkEveryRowExactlyOnce(rows: 4)
        let sent = try Self.payloads(mock)
        func alert(_ token: String) -> [String: Any]? {
            ((sent[token]?["aps"] as? [String: Any])?["alert"]) as? [String: Any]
        }
        #expect(alert(t[0])?["title"] as? String == #"Hi Zoë "Z" \o/"#)
        #expect(alert(t[0])?["body"] as? String == "From Line 1\nLine 2\tend: \"Zoë \"Z\" \\o/\"")
        #expect(sent[t[0]]?["t"] as? String == "")
        #expect(alert(t[1])?["title"] as? String == "Hi Bob")
        #expect(alert(t[1])?["body"] as? String == "From París 🎉: \"Bob\"")
        #expect(sent[t[1]]?["t"] as? String == MockServerProcess.topic)
        #expect(sent[t[2]]?["own"] as? Bool == true && sent[t[2]]?["aps"] == nil)
        #expect(alert(t[3])?["title"] as? String == "Hi ")
    }

    @Test func aFilledPayloadOverTheSizeLimitIsRejectedAndTheOthersAreSent() throws {
        let rig = try Rig(rows: 1)
        let t = Self.tokens(2)
        let long = String(repeating: "x", count: 5000)
        let csv = try rig.scratch.write("c.csv", "device_token,first_name,city\n\(t[0]),\(long),a\n\(t[1]),Al,b\n")
        let template = try rig.scratch.write("t.json", Self.template.replacingOccurrences(of: #","t":"{{topic}}""#, with: ""))
        let (run, mock) = try Self.send(rig, input: csv, template: template)
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2)
        let byRow = Dictionary(uniqueKeysWithValues: try run.records.map { ($0["row"] as? Int ?? 0, $0) })
        #expect(byRow[1]?["outcome"] as? String == "rejected" && byRow[1]?["reason"] as? String == "PayloadTooLarge")
        #expect(byRow[2]?["outcome"] as? String == "delivered")
        #expect(try Self.payloads(mock).keys.sorted() == [t[1]])
    }

    @Test func aPlaceholderNamingAColumnTheHeaderLacksStopsTheRunBeforeAnythingIsSent() throws {
        let rig = try Rig(rows: 1)
        let csv = try rig.scratch.write("c.csv", "device_token,first_name\n\(Self.tokens(1)[0]),Al\n")
        let template = try rig.scratch.write("t.json", Self.template)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--record-payloads"])
        let out = rig.scratch.path("out")
        let result = try Binary.run(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out)
                                    + ["--payload-template", template])
        mock.stop()
        #expect(result.status == 1)
        #expect(result.stderr.contains("{{city}}") && result.stderr.contains(#""device_token", "first_name""#), "\(result.stderr)")
        #expect(try mock.records().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"))
    }

    @Test func aBadTemplateOrOneGivenWithPayloadFileIsRefusedNamingTheProblem() throws {
        let rig = try Rig(rows: 1)
        let csv = try rig.scratch.write("c.csv", "device_token,n\n\(Self.tokens(1)[0]),1\n")
        let cases: [(String, String)] = [
            ("{\n  \"a\": {{n}}\n}", "line 2, column 8 is outside a JSON string"),
            (#"{"a":"{{n"}"#, "has no closing }}"),
            (#"{"a":"{{ }}"}"#, "names no column"),
            (#"["{{n}}"]"#, "not a JSON object"),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let template = try rig.scratch.write("t\(index).json", text)
            let result = try Binary.run(["send", "--input", csv, "--endpoint", "mock", "--out", rig.scratch.path("o\(index)"),
                                         "--payload-template", template])
            #expect(result.status == 1 && result.stderr.contains(message) && result.stderr.contains(template), "\(result.stderr)")
        }
        let payload = try rig.scratch.write("p.json", "{}")
        let template = try rig.scratch.write("ok.json", #"{"a":"{{n}}"}"#)
        let both = try Binary.run(["send", "--input", csv, "--endpoint", "mock", "--out", rig.scratch.path("ob"),
                                   "--payload-template", template, "--payload-file", payload])
        #expect(both.status == 1 && both.stderr.contains("not both"), "\(both.stderr)")
    }
}
