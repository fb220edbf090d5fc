import Foundation
import Testing
import TestSupport

/// `send --dry-run` of issue 18's mixed campaign through the built binary: it routes every row by
/// the same rules as the real run, so the rows the real run would reject before sending are
/// rejected here too, for the same reasons, and only the rest count as would-send.
@Suite(.serialized) struct ManyAppsDryRunTests {
    typealias Campaign = ManyAppsEndToEndTests

    static func dryRun(_ setup: Campaign.Setup, input: String, keysFile: String, endpoints: [String]) throws -> CampaignRun {
        let out = setup.scratch.path("dry-\(UUID().uuidString.prefix(6))")
        let arguments = ["send", "--input", input, "--keys-file", keysFile, "--progress", "never", "--out", out, "--dry-run"]
            + endpoints.flatMap { ["--endpoint", $0] }
        return CampaignRun(result: try Binary.run(arguments), outDirectory: out)
    }

    @Test func aDryRunRejectsTheRowsNoCredentialServesAsTheRealRunWouldAndCountsOnlyTheRestAsWouldSend() throws {
        let setup = try Campaign.Setup()
        let keysFile = try setup.keysFile("keys.toml")
        let campaign = Campaign.campaign()
        let input = try setup.csv(campaign.map(\.0))
        var rejectedRows: [Int: String] = [:]
        for (index, (_, expected)) in campaign.enumerated() {
            if case .rejected(let reason) = expected { rejectedRows[index + 1] = reason }
        }
        let listener = try SendDryRunTests.SilentListener()
        let local = "127.0.0.1:\(listener.port)"
        // Explicit endpoints (which a dry run never connects to) and the rehearsal's mocks (which it never starts).
        for endpoints in [["production=\(local)", "sandbox=\(local)"], ["mock"]] {
            let run = try Self.dryRun(setup, input: input, keysFile: keysFile, endpoints: endpoints)
            #expect(run.result.status == 0, "\(endpoints): \(run.result.stdout)\(run.result.stderr)")
            let summary = try run.summary
            #expect(summary["rows"] as? Int == campaign.count)
            #expect(summary["rejected"] as? Int == rejectedRows.count, "\(endpoints): \(summary)")
            #expect(summary["would_send"] as? Int == campaign.count - rejectedRows.count, "\(endpoints): \(summary)")
            let byReason = summary["by_reason"] as? [String: Int] ?? [:]
            #expect(byReason == ["NoCredentialsForTopic": 25, "InvalidEnvironment": 3, "UnknownKeyId": 2], "\(summary)")
            let noCredentials = (summary["no_credentials"] as? [[String: Any]] ?? []).map {
                "\($0["topic"] as? String ?? "?") \($0["environment"] as? String ?? "?") \($0["rows"] as? Int ?? -1)"
            }
            #expect(noCredentials == ["\(Campaign.three) sandbox 10", "\(Campaign.two) sandbox 15"], "\(summary)")
            #expect(run.result.stderr.contains(Campaign.two) && run.result.stderr.contains("sandbox"),
                    "the rows no key serves are named on stderr: \(run.result.stderr)")
            // Each rejected row once in the log, with the real run's reason; no record for a row that would be sent.
            let records = try run.records
            #expect(records.compactMap { $0["row"] as? Int }.sorted() == rejectedRows.keys.sorted())
            for record in records {
                let row = record["row"] as? Int ?? 0
                #expect(record["outcome"] as? String == "rejected" && record["reason"] as? String == rejectedRows[row],
                        "row \(row): \(record)")
            }
        }
        #expect(listener.waiting() == 0, "a dry run connects to nothing")
    }

    @Test func aDryRunStopsWhenRowsNeedAnEnvironmentNoEndpointServes() throws {
        let setup = try Campaign.Setup()
        // A serves any environment; only production has an endpoint; some rows are sandbox rows.
        let keysFile = try setup.scratch.write("any.toml", [("AAAAAAAAA1", "environment = \"any\""),
                                                            ("BBBBBBBBB2", "environment = \"production\"")].map { id, rest in
            "[[keys]]\nfile = \"\(setup.keys[id]!)\"\nteam-id = \"\(Campaign.team)\"\n\(rest)\n"
        }.joined(separator: "\n"))
        let rows = (1...6).map { ManyAppsEndToEndTests.Row(token: Campaign.token($0), topic: Campaign.three,
                                                           environment: $0 <= 2 ? "sandbox" : "") }
        let listener = try SendDryRunTests.SilentListener()
        let run = try Self.dryRun(setup, input: try setup.csv(rows), keysFile: keysFile,
                                  endpoints: ["production=127.0.0.1:\(listener.port)"])
        #expect(run.result.status == 1, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stderr.contains("2 rows need the sandbox environment"), "\(run.result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: run.outDirectory + "/summary.json"), "stopped before reading the rows")
    }
}
