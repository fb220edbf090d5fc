import Foundation
import Testing
import TestSupport

/// What the broadcast tests share: a scratch directory with a signing key, update payloads, CSV
/// files, and `apns-bulk broadcast` run against a mock (embedded, or a `mock-server` process).
struct BroadcastRig {
    let scratch: TemporaryDirectory
    let key: String

    init() throws {
        scratch = try TemporaryDirectory()
        key = try scratch.signingKey("key.p8")
    }

    var token: [String] { ["--key-file", key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID] }

    /// A well-formed Live Activity update (ActivityKit's rules hold), as a CSV field.
    static func update(_ score: Int) -> String {
        csvField(#"{"aps":{"event":"update","timestamp":\#(1_767_225_600 + score),"content-state":{"score":\#(score)}}}"#)
    }

    /// `text` quoted for CSV.
    static func csvField(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A channel id of the form APNs hands out (base64), unique per `index`.
    static func channel(_ index: Int) -> String {
        Data("channel-\(index)".utf8).base64EncodedString()
    }

    /// Writes the CSV `name` with broadcast's header and `rows` (each already CSV).
    func csv(_ name: String, header: String = "channel_id,payload,priority,expiration,apns_request_id",
             _ rows: [String]) throws -> String {
        try scratch.write(name, ([header] + rows).joined(separator: "\n") + "\n")
    }

    /// `apns-bulk broadcast` of `input` to `endpoint` (mock: the embedded mock), results in `out`.
    func broadcast(_ input: String, out: String, endpoint: [String] = ["--endpoint", "mock"],
                   _ extra: [String] = []) throws -> CampaignRun {
        let directory = scratch.path(out)
        let result = try Binary.run(["broadcast", "--input", input, "--bundle-id", MockServerProcess.topic, "--out", directory,
                                     "--progress", "never"] + token + endpoint + extra)
        return CampaignRun(result: result, outDirectory: directory)
    }

    /// The flags that send to `mock`.
    static func endpoint(_ mock: MockServerProcess) -> [String] { ["--endpoint", mock.endpoint, "--ca-file", mock.caFile] }
}

extension CampaignRun {
    /// dead-channels.csv's lines after the header, split into fields.
    var deadChannels: [[String]] {
        get throws {
            let text = try String(contentsOfFile: outDirectory + "/dead-channels.csv", encoding: .utf8)
            #expect(text.hasPrefix("channel_id,reason,status,row\n"), "\(text)")
            return text.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        }
    }

    /// The records by row.
    var recordsByRow: [Int: [String: Any]] {
        get throws {
            Dictionary(try records.map { ($0["row"] as? Int ?? -1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
