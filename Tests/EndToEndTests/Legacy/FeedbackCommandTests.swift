import Foundation
import Testing
import TestSupport

/// `apns-bulk feedback` against the mock's feedback service over TLS with a client certificate.
@Suite struct FeedbackCommandTests {
    static let gone = String(repeating: "ab", count: 32)
    static let alsoGone = String(repeating: "cd", count: 32)

    @Test func feedbackTuplesAreMergedIntoAnExistingDeadTokenListAndATruncatedTupleIsOnlyReported() throws {
        let scratch = try TemporaryDirectory()
        let unregistered = try scratch.write("unregistered.txt", "\(Self.gone),1700000000123\n\(Self.alsoGone),1800000000000\n")
        // Tuples go out in token order: cutting 5 bytes truncates the second (alsoGone).
        let mock = try LegacyMockProcess(scratch: scratch, unregisteredFile: unregistered, extra: ["--feedback-cut-bytes", "5"])
        defer { mock.stop() }
        let list = try scratch.write("dead.csv", """
            device_token,reason,status,unregistered_at,row
            \(Self.gone),BadDeviceToken,400,,7
            \(String(repeating: "ef", count: 32)),Unregistered,410,2026-01-01T00:00:00.000Z,3

            """)
        let run = try Binary.run(["feedback", "--endpoint", mock.feedbackEndpoint, "--out", list] + mock.certificateArguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("ended inside a tuple"))
        let lines = try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines == [
            "device_token,reason,status,unregistered_at,row",
            "\(Self.gone),Unregistered,,2023-11-14T22:13:20.000Z,",
            "\(String(repeating: "ef", count: 32)),Unregistered,410,2026-01-01T00:00:00.000Z,3",
        ])

        // A new list from the whole answer, both tuples.
        let mockWhole = try LegacyMockProcess(scratch: scratch, unregisteredFile: unregistered)
        defer { mockWhole.stop() }
        let fresh = scratch.path("fresh.csv")
        let second = try Binary.run(["feedback", "--endpoint", mockWhole.feedbackEndpoint, "--out", fresh]
                                    + mockWhole.certificateArguments)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stderr.contains("ended inside a tuple"))
        let freshLines = try String(contentsOfFile: fresh, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(Array(freshLines) == ["\(Self.gone),Unregistered,,2023-11-14T22:13:20.000Z,",
                                      "\(Self.alsoGone),Unregistered,,2027-01-15T08:00:00.000Z,"])
    }

    @Test func feedbackWithoutACertificateStopsBeforeConnecting() throws {
        let scratch = try TemporaryDirectory()
        let run = try Binary.run(["feedback", "--endpoint", "127.0.0.1:9", "--out", scratch.path("dead.csv")])
        #expect(run.status == 1)
        #expect(run.stderr.contains("--cert-file"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("dead.csv")))
    }
}
