import Foundation
import Testing
import TestSupport

/// A cleanup stopped mid-way, through the built binary on SQLite: whole batches are committed, and
/// rerunning the same command ends where one clean run ends.
@Suite struct CleanupInterruptionTests {
    static let tokens = (1...40).map { String(format: "%064x", $0) }

    /// 40 rows, one a token, and a list of all 40; the row of token 25 is held by `trigger`.
    static func setup(trigger: String) throws -> (TemporaryDirectory, database: String, list: String) {
        let directory = try TemporaryDirectory()
        let database = directory.path("app.db")
        let values = tokens.enumerated().map { "(\($0.offset + 1), '\($0.element)')" }.joined(separator: ", ")
        try Command.succeeding("sqlite3", [database, """
            CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL);
            INSERT INTO devices VALUES \(values);
            CREATE TRIGGER held BEFORE DELETE ON devices WHEN old.id = 25 BEGIN \(trigger) END;
            """])
        let lines = tokens.map { "\($0),Unregistered,410,2025-12-22T16:46:28.279Z," }
        let list = try directory.write("dead.csv", "device_token,reason,status,unregistered_at,row\n" + lines.joined(separator: "\n") + "\n")
        return (directory, database, list)
    }

    static func arguments(_ database: String, _ list: String, audit: String) -> [String] {
        ["cleanup", "--dead-tokens", list, "--database", "sqlite:" + database, "--table", "devices", "--token-column", "token",
         "--batch-size", "1", "--audit-out", audit]
    }

    static func ids(_ database: String) throws -> String {
        try Command.succeeding("sqlite3", [database, "SELECT group_concat(id) FROM (SELECT id FROM devices ORDER BY id)"]).stdout
    }

    static func auditRows(_ path: String) throws -> [String] {
        Array(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").dropFirst().map(String.init))
    }

    @Test func aDatabaseFailureMidwayExitsTwoSayingWhatWasCommittedAndARerunFinishes() throws {
        let (directory, database, list) = try Self.setup(trigger: "SELECT RAISE(ABORT, 'row 25 is held');")
        let first = try Binary.run(Self.arguments(database, list, audit: directory.path("first.csv")))
        #expect(first.status == 2)
        #expect(first.stderr.hasSuffix("apns-bulk: batch 25 of 40 failed: sqlite:\(database): row 25 is held. 24 batches "
                                       + "(24 rows affected) were committed before it; rerun the same command to finish the job\n"),
                "\(first.stderr)")
        #expect(try Self.ids(database) == (25...40).map(String.init).joined(separator: ",") + "\n")
        #expect(try Self.auditRows(directory.path("first.csv")).count == 24)
        try Command.succeeding("sqlite3", [database, "DROP TRIGGER held;"])
        let rerun = try Binary.run(Self.arguments(database, list, audit: directory.path("rerun.csv")) + ["--json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.stdout.contains("\"affected\":16,"))
        #expect(try Self.ids(database) == "\n")
    }

    @Test func aKillMidRunLeavesWholeBatchesAndARerunEndsAsOneCleanRunEnds() throws {
        // Deleting row 25 takes seconds: long enough to kill the run while it holds that batch open.
        let slow = "SELECT count(*) FROM (WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200000000) SELECT i FROM c);"
        let (directory, database, list) = try Self.setup(trigger: slow)
        let audit = directory.path("first.csv")
        let process = try Binary.start(Self.arguments(database, list, audit: audit))
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() } }
        let deadline = Date().addingTimeInterval(60)
        while (try? Self.auditRows(audit).count) != 24, Date() < deadline, process.isRunning { usleep(20_000) }
        usleep(200_000)
        #expect(process.isRunning, "the run ended before it could be killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(try Self.auditRows(audit).count == 24)
        // The sqlite3 tool rolls the killed batch back from its journal when it opens the file.
        try Command.succeeding("sqlite3", [database, "DROP TRIGGER held;"])
        #expect(try Self.ids(database) == (25...40).map(String.init).joined(separator: ",") + "\n")
        let rerun = try Binary.run(Self.arguments(database, list, audit: directory.path("rerun.csv")))
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try Self.ids(database) == "\n")
        #expect(try Self.auditRows(audit) + Self.auditRows(directory.path("rerun.csv"))
                == Self.tokens.enumerated().map { "\($0.offset + 1),\($0.element),Unregistered,2025-12-22T16:46:28.279Z,delete" })
    }
}
