import Foundation
import Testing
import TestSupport

extension MariaDBCleanupCommandTests {
    /// A cleanup stopped at batch 25 of 40 on MariaDB, held there by a row lock another session
    /// takes: the batches before it are committed, that one is not, and rerunning the same command
    /// ends where one clean run ends.
    @Suite struct Interruption {
        static let tokens = (1...40).map { String(format: "%064x", $0) }

        let setup: Setup
        var server: MariaDBServer { setup.server }
        var database: String { setup.database }
        var directory: TemporaryDirectory { setup.directory }

        init() throws {
            let values = Self.tokens.enumerated().map { "(\($0.offset + 1), '\($0.element)')" }.joined(separator: ", ")
            let lines = Self.tokens.map { "\($0),Unregistered,410,2025-12-22T16:46:28.279Z," }
            setup = try Setup(table: """
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, KEY (token));
                INSERT INTO devices VALUES \(values);
                """, list: "device_token,reason,status,unregistered_at,row\n" + lines.joined(separator: "\n") + "\n")
        }

        func arguments(audit: String) -> [String] {
            ["cleanup", "--dead-tokens", setup.list, "--database", server.url(database: database), "--table", "devices",
             "--token-column", "token", "--batch-size", "1", "--audit-out", directory.path(audit)]
        }

        func auditRows(_ name: String) throws -> [String] {
            Array(try String(contentsOfFile: directory.path(name), encoding: .utf8).split(separator: "\n").dropFirst().map(String.init))
        }

        /// Starts the run and waits until it has committed 24 batches and waits for row 25's lock.
        func startHeldAtBatch25(audit: String) throws -> (Process, connection: String) {
            let process = try Binary.start(arguments(audit: audit), stderrFile: directory.path(audit + ".stderr"))
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, process.isRunning {
                let waiting = try server.rootSQL("""
                    SELECT p.ID FROM information_schema.PROCESSLIST AS p
                    JOIN information_schema.INNODB_TRX AS x ON x.trx_mysql_thread_id = p.ID
                    WHERE p.USER = '\(server.user)' AND p.DB = '\(database)' AND x.trx_state = 'LOCK WAIT'
                    """)
                if !waiting.isEmpty, (try? auditRows(audit).count) == 24 {
                    return (process, waiting.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                // Not faster: INFORMATION_SCHEMA.INNODB_TRX is a snapshot InnoDB refreshes only when it
                // has not been read for 0.1 s, so polling every 20 ms kept reading the snapshot taken
                // before the run reached row 25.
                usleep(250_000)
            }
            throw MariaDBServer.Unavailable(description: "the run did not stop at row 25's lock: "
                                            + ((try? String(contentsOfFile: directory.path(audit + ".stderr"), encoding: .utf8)) ?? ""))
        }

        @Test func aKillWhileHeldByARowLockLeavesWholeBatchesAndARerunEndsAsOneCleanRunEnds() throws {
            let lock = try server.holdSession("BEGIN; SELECT id FROM devices WHERE id = 25 FOR UPDATE;", database: database)
            let (process, _) = try startHeldAtBatch25(audit: "first.csv")
            defer { process.stop(signal: SIGKILL) }

            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            lock.release()

            #expect(try auditRows("first.csv").count == 24)
            #expect(try setup.ids() == (25...40).map(String.init).joined(separator: ",") + "\n")
            let rerun = try Binary.run(arguments(audit: "rerun.csv") + ["--json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(rerun.stdout.contains("\"affected\":16,"))
            #expect(try setup.ids() == "NULL\n")
            #expect(try auditRows("first.csv") + auditRows("rerun.csv")
                    == Self.tokens.enumerated().map { "\($0.offset + 1),\($0.element),Unregistered,2025-12-22T16:46:28.279Z,delete" })
        }

        @Test func aConnectionLostMidwayExitsTwoSayingWhatWasCommittedAndARerunFinishes() throws {
            let lock = try server.holdSession("BEGIN; SELECT id FROM devices WHERE id = 25 FOR UPDATE;", database: database)
            let (process, connection) = try startHeldAtBatch25(audit: "first.csv")
            defer { process.stop(signal: SIGKILL) }

            try server.rootSQL("KILL CONNECTION \(connection)")
            process.waitUntilExit()
            lock.release()

            let stderr = try String(contentsOfFile: directory.path("first.csv.stderr"), encoding: .utf8)
            #expect(process.terminationStatus == 2)
            #expect(stderr.contains("batch 25 of 40 failed: mysql://cleanup:***@127.0.0.1:\(server.port)/\(database): "), "\(stderr)")
            #expect(stderr.hasSuffix("24 batches (24 rows affected) were committed before it; rerun the same command to finish the job\n"))
            #expect(!stderr.contains(server.password))
            #expect(try setup.ids() == (25...40).map(String.init).joined(separator: ",") + "\n")
            let rerun = try Binary.run(arguments(audit: "rerun.csv") + ["--json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(rerun.stdout.contains("\"affected\":16,"))
            #expect(try setup.ids() == "NULL\n")
        }
    }
}
