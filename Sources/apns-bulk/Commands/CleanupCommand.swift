import APNs
import ArgumentParser
import Cleanup
import Foundation
import Pipeline

/// `apns-bulk cleanup` (issue 33): applies dead-token lists to the app's own device table by
/// Apple's rule. The list is read here through Pipeline, which owns its format; the module
/// Cleanup gets plain values and does the rest over one of the three databases.
struct CleanupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cleanup",
        abstract: "Delete or mark the dead tokens of dead-tokens.csv in the app's own database.",
        usage: "apns-bulk cleanup --dead-tokens <file> ... --database <url>\n"
            + "       --table <table> --token-column <column>\n"
            + "       [--registered-at-column <column>] [<options>]",
        discussion: """
            Reads one or more dead-token lists, dead-tokens.csv as send, report and feedback write \
            it, keeping one line per token: the one with the latest unregistered_at. Then deletes the \
            table's rows holding those tokens, or with --mark sets a column on them. Apple's rule: a \
            token is dead only until the device registers it again, so with \
            --registered-at-column a row registered at or after the token's unregistered_at is kept. \
            A row whose registered-at is NULL counts as registered before; a list line without an \
            unregistered_at cannot be judged and its rows are affected and counted apart. Tokens \
            match in either case; the table's own spelling is kept.

            The database: postgresql://user[:password]@host[:port]/db with ?sslmode= honoured, \
            mysql://user[:password]@host[:port]/db for MariaDB and MySQL, or sqlite:PATH and \
            sqlite:///abs/path; a missing SQLite file is an error, never created. Keep the password off \
            the command line with --password-env or --password-file; for PostgreSQL, PGPASSWORD \
            works too. The password is never printed.

            The work is done in batches, each its own transaction; after a failure, rerunning the \
            same command finishes the job, and a second run affects no row. One summary line goes \
            to stdout (or one JSON object with --json), progress to stderr.

            Exit status: 0 done; 1 bad flags, files, URL, table or column, a database that cannot be \
            reached, or more rows than --max-affected, with nothing changed; 2 the database failed \
            mid-way, and the message says what was committed.
            """
    )

    @Option(name: .customLong("dead-tokens"), help: "A dead-token list (dead-tokens.csv); give it more than once to merge several.")
    var deadTokens: [String] = []
    @Option(help: "The app's database: postgresql://, mysql:// or sqlite:PATH.")
    var database: String
    @Option(help: "The device table, as TABLE or SCHEMA.TABLE.")
    var table: String
    @Option(name: .customLong("token-column"), help: "The column holding the device tokens (text).")
    var tokenColumn: String
    @Option(name: .customLong("registered-at-column"), help: "The column holding when the device registered its token, for Apple's rule. Default: none; every matched row is affected and the summary says the rule was not applied.")
    var registeredAtColumn: String?
    @Option(name: .customLong("topic-column"), help: "Touch only rows whose column equals --topic: the app the list came from. Default: none.")
    var topicColumn: String?
    @Option(help: "The topic to restrict to, with --topic-column. Default: none.")
    var topic: String?
    @Option(name: .customLong("environment-column"), help: "Touch only rows whose column equals --environment. Default: none.")
    var environmentColumn: String?
    @Option(help: "The environment to restrict to, with --environment-column. Default: none.")
    var environment: String?
    @Option(help: "Set this column where it is NULL, instead of deleting the row: to the token's unregistered_at, or the run's time for a line without one. Default: none; rows are deleted.")
    var mark: String?
    @Option(name: .customLong("reasons"), help: "The list reasons to act on, separated by commas. Default: Unregistered,ExpiredToken. Name BadDeviceToken or DeviceTokenNotForTopic only when they are not an environment or app mix-up.")
    var reasonsChoice: String?
    var reasons: String { reasonsChoice ?? "Unregistered,ExpiredToken" }
    @Flag(name: .customLong("dry-run"), help: "Judge every row and report the same counts, but change nothing.")
    var dryRun = false
    @Option(name: .customLong("max-affected"), help: "Change nothing, and exit 1, when more rows than this would be affected. Default: no limit.")
    var maxAffected: Int?
    @Option(name: .customLong("batch-size"), help: "Distinct tokens per batch; each batch is one transaction. Default: 1000.")
    var batchSizeChoice: Int?
    var batchSize: Int { batchSizeChoice ?? 1000 }
    @Option(name: .customLong("audit-out"), help: "Write every affected row here as CSV: its key columns, token, reason, unregistered_at and action. Default: none.")
    var auditOut: String?
    @Flag(help: "Print the summary as one JSON object.")
    var json = false
    @Option(name: .customLong("password-env"), help: "The environment variable holding the database password. Default: none.")
    var passwordEnv: String?
    @Option(name: .customLong("password-file"), help: "A file whose first line is the database password, such as a mounted Kubernetes Secret. Default: none.")
    var passwordFile: String?

    /// The reasons a dead-token list can hold.
    static let listReasons: [Reason] = [.unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic]

    func run() throws {
        let request = try validatedRequest()
        let wanted = try reasonNames()
        let url: DatabaseURL
        do { url = try DatabaseURL.parse(database) } catch { throw RunFailure.usage(error.description) }
        let password: String?
        do {
            password = try DatabasePassword.resolve(url: url, environmentVariable: passwordEnv, file: passwordFile)
        } catch {
            throw RunFailure.usage(error.description)
        }
        if url.system == .sqlite, password != nil {
            writeStandardError("cleanup: SQLite takes no password; the one given is ignored\n")
        }
        let list: DeadTokenList
        do { list = try DeadTokenList(paths: deadTokens, keepsReason: wanted.contains) } catch {
            throw RunFailure.usage("--dead-tokens \(error.description)")
        }
        let entries = list.lines.map {
            ScratchEntry(token: $0.token.lowercased(), reason: $0.reason, unregisteredAt: $0.unregisteredAt)
        }
        writeStandardError("cleanup: \(entries.count) distinct tokens to look for (\(list.linesRead) lines read, "
                           + "\(list.linesFilteredOut) of other reasons left out)\n")
        let connection = try open(url, password: password)
        let plan: CleanupPlan
        do { plan = try request.plan(on: connection, system: url.system) } catch {
            throw RunFailure(message: error.description, status: error.status)
        }
        let audit = try auditOut.map { path in try CleanupAuditFile(path: path, keyColumns: plan.keyColumns.map(\.name)) }
        let run = CleanupRun(database: connection, plan: plan, entries: entries,
                             options: .init(batchSize: batchSize, dryRun: dryRun, maxAffected: maxAffected),
                             runTime: Int64(Date().timeIntervalSince1970 * 1000))
        let counts: CleanupCounts
        do {
            counts = try run.run(audit: { rows in try audit?.append(rows) },
                                 progress: { writeStandardError($0 + "\n") })
        } catch {
            throw RunFailure(message: error.description, status: error.status)
        }
        do { try audit?.close() } catch {
            throw RunFailure(message: "--audit-out \(auditOut ?? ""): \(error)", status: 2)
        }
        writeStandardOutput((json ? CleanupSummary.json(counts) : CleanupSummary.line(counts, plan: plan)) + "\n")
    }

    /// The flags' names and pairs, checked before anything is read.
    private func validatedRequest() throws -> CleanupRequest {
        guard !deadTokens.isEmpty else { throw RunFailure.usage("give at least one --dead-tokens FILE (a dead-tokens.csv)") }
        guard batchSize >= 1 else { throw RunFailure.usage("--batch-size \(batchSize): give a number of tokens of at least 1") }
        if let maxAffected, maxAffected < 0 { throw RunFailure.usage("--max-affected \(maxAffected): give 0 or more rows") }
        var restrictions: [CleanupRequest.Restriction] = []
        for (columnFlag, column, valueFlag, value) in [("--topic-column", topicColumn, "--topic", topic),
                                                       ("--environment-column", environmentColumn, "--environment", environment)] {
            switch (column, value) {
            case let (column?, value?): restrictions.append(.init(column: column, value: value, flag: columnFlag))
            case (nil, nil): break
            case (nil, _): throw RunFailure.usage("\(valueFlag) needs \(columnFlag): the column that holds it")
            case (_, nil): throw RunFailure.usage("\(columnFlag) needs \(valueFlag): the value rows must have to be touched")
            }
        }
        return CleanupRequest(table: table, tokenColumn: tokenColumn, registeredAtColumn: registeredAtColumn,
                              restrictions: restrictions, markColumn: mark)
    }

    /// `--reasons`, each one a reason a dead-token list holds (any case), as APNs spells it.
    private func reasonNames() throws -> Set<String> {
        var names = Set<String>()
        for given in reasons.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !given.isEmpty {
            guard let reason = Self.listReasons.first(where: { $0.name.lowercased() == given.lowercased() }) else {
                throw RunFailure.usage("--reasons \(given): not a reason a dead-token list holds; give some of "
                                       + Self.listReasons.map(\.name).joined(separator: ","))
            }
            names.insert(reason.name)
        }
        guard !names.isEmpty else { throw RunFailure.usage("--reasons: give at least one reason, such as Unregistered") }
        return names
    }

    private func open(_ url: DatabaseURL, password: String?) throws -> any CleanupDatabase {
        do {
            switch url.system {
            case .postgresql: return try PostgresDatabase(url: url, password: password)
            case .mysql: return try MariaDBDatabase(url: url, password: password)
            case .sqlite: return try SQLiteDatabase(url: url, password: password)
            }
        } catch {
            throw RunFailure.usage("--database \(error.description); nothing was changed")
        }
    }
}
