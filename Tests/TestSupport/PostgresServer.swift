import Foundation

/// A private PostgreSQL cluster for one test suite, from Debian's server binaries
/// (`/usr/lib/postgresql/N/bin`): initdb into a temporary directory, listening on 127.0.0.1 only
/// at a free port, its socket in that directory, and one superuser who logs in with a password
/// (scram-sha-256, over TCP as over the socket). `stop()` ends it and removes the directory.
///
/// PostgreSQL refuses to run as root, so when the tests run as root (here and in CI) its programs
/// run as the `postgres` user, which owns the directory.
///
/// `@unchecked Sendable`: its process is touched only by `stop()`, once, after the suite's tests.
public final class PostgresServer: @unchecked Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    public let port: Int
    public let user = "apns"
    public let password: String
    public let database = "postgres"
    /// The server's programs (`initdb`, `pg_ctl`, `psql`).
    public let binaries: String
    private let root: String
    private let process: Process

    /// `postgresql://apns:PASSWORD@127.0.0.1:PORT/postgres`.
    public var url: String { "postgresql://\(user):\(password)@127.0.0.1:\(port)/\(database)" }

    /// The environment a client program needs to log in without the password on its command line.
    public var clientEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PGPASSWORD"] = password
        return environment
    }

    /// Creates and starts the cluster (about a second).
    public static func start() throws -> PostgresServer {
        let binaries = try serverBinaries()
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("apns-bulk-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let password = "pw-" + UUID().uuidString.prefix(12).lowercased()
        do {
            try Data(password.utf8).write(to: URL(fileURLWithPath: root + "/password"))
            if getuid() == 0 { try Command.succeeding("chown", ["-R", "postgres:postgres", root]) }
            try asServerUser(binaries + "/initdb", ["-D", root + "/data", "-U", "apns", "--pwfile=" + root + "/password",
                                                    "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
                                                    "--no-instructions"])
            // A port taken between LoopbackPort.free() and the server's bind: try another.
            var lastFailure: Error?
            for _ in 0..<3 {
                let port = try LoopbackPort.free()
                do {
                    let process = try startServer(binaries: binaries, root: root, port: port)
                    return PostgresServer(port: port, password: password, binaries: binaries, root: root, process: process)
                } catch {
                    lastFailure = error
                }
            }
            throw lastFailure ?? Unavailable(description: "PostgreSQL did not start")
        } catch {
            let log = (try? String(contentsOfFile: root + "/server.log", encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: root)
            throw Unavailable(description: "could not start PostgreSQL: \(error)\n\(log.suffix(2000))")
        }
    }

    private init(port: Int, password: String, binaries: String, root: String, process: Process) {
        self.port = port
        self.password = password
        self.binaries = binaries
        self.root = root
        self.process = process
    }

    /// The postmaster runs in the foreground, this process's child: `pg_ctl start` would leave a
    /// daemon holding the descriptor by which Foundation learns that pg_ctl ended, so it never would.
    private static func startServer(binaries: String, root: String, port: Int) throws -> Process {
        let arguments = [binaries + "/postgres", "-D", root + "/data", "-p", String(port), "-k", root,
                         "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
                         "-c", "full_page_writes=off"]
        let process = getuid() == 0
            ? try Command.start("/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + arguments,
                                standardError: Command.outputFile(root + "/server.log"))
            : try Command.start(arguments[0], Array(arguments.dropFirst()), standardError: Command.outputFile(root + "/server.log"))
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            let ready = try Command.run(binaries + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port)])
            if ready.status == 0 { return process }
            usleep(50_000)
        }
        process.stop(signal: SIGKILL)
        throw Unavailable(description: "PostgreSQL did not accept connections on 127.0.0.1:\(port)")
    }

    /// Stops the server at once (nothing in it is worth a clean shutdown) and removes its directory.
    public func stop() {
        if (try? Self.asServerUser(binaries + "/pg_ctl", ["stop", "-D", root + "/data", "-m", "immediate", "-w"])) == nil {
            process.stop(signal: SIGKILL)
        }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Runs `sql` (one or more statements, in one transaction) with psql; returns its rows, one a
    /// line, columns separated by `|`. Throws when a statement fails.
    @discardableResult
    public func sql(_ sql: String) throws -> String {
        let result = try Command.run(binaries + "/psql", psqlArguments + ["-c", sql], environment: clientEnvironment)
        guard result.status == 0 else { throw CommandFailed(command: "psql -c \(sql.prefix(200))", result: result) }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// psql's arguments to log in as the suite's user, quietly, rows unaligned and without headers.
    public var psqlArguments: [String] {
        ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", user, "-d", database]
    }

    /// The newest installed server's bin directory.
    private static func serverBinaries() throws -> String {
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [])
            .compactMap(Int.init).sorted()
        guard let newest = versions.last(where: { FileManager.default.isExecutableFile(atPath: "\(base)/\($0)/bin/initdb") }) else {
            throw Unavailable(description: "no PostgreSQL server in \(base); `make test-deps` installs Debian's postgresql")
        }
        return "\(base)/\(newest)/bin"
    }

    /// Runs a server program to its end, as `postgres` when this process is root.
    @discardableResult
    private static func asServerUser(_ program: String, _ arguments: [String]) throws -> CommandResult {
        let result = getuid() == 0
            ? try Command.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
            : try Command.run(program, arguments)
        guard result.status == 0 else {
            throw CommandFailed(command: ([program] + arguments).joined(separator: " "), result: result)
        }
        return result
    }
}
