import Foundation

/// A private MariaDB server for one test suite: Debian's `mariadb-install-db` and `mariadbd`, a data
/// directory and socket in a temporary directory, no option files (`--no-defaults`), listening on
/// 127.0.0.1 only on a free port, and a user with a password that reaches it over TCP. `stop()`
/// kills it and removes the directory.
///
/// Its state is set once by `start()`; `stop()` runs once, when the suite ends.
public final class MariaDBServer: @unchecked Sendable {
    /// The server of the suite running now (`serving`).
    @TaskLocal public static var current: MariaDBServer?

    public let port: Int
    public let user = "cleanup"
    public let password: String
    private let directory: TemporaryDirectory
    private let process: Process

    /// The server, or a session a test needs on it, could not be had.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String

        public init(description: String) { self.description = description }
    }

    /// `mysql://cleanup:PASSWORD@127.0.0.1:PORT/database`.
    public func url(database: String, password: String? = nil) -> String {
        "mysql://\(user):\(password ?? self.password)@127.0.0.1:\(port)/\(database)"
    }

    /// Like `url`, without the password, for a run that takes it from elsewhere.
    public func urlWithoutPassword(database: String) -> String { "mysql://\(user)@127.0.0.1:\(port)/\(database)" }

    public static func start() throws -> MariaDBServer {
        let directory = try TemporaryDirectory()
        let asRoot = getuid() == 0 ? ["--user=root"] : []
        // Speed over durability: the data dies with the test.
        let fast = ["--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=0",
                    "--innodb-doublewrite=0", "--innodb-flush-method=nosync", "--skip-log-bin", "--performance-schema=OFF"]
        let install = try Command.tool("mariadb-install-db", ["--no-defaults", "--datadir=\(directory.path("data"))",
                                                              "--auth-root-authentication-method=normal", "--skip-test-db",
                                                              "--skip-name-resolve"] + asRoot + fast)
        guard install.status == 0 else {
            throw Unavailable(description: "mariadb-install-db exited \(install.status): \(install.stderr)")
        }
        var lastError = ""
        for _ in 0..<3 {
            let port = try LoopbackPort.free()
            let process = try Command.start("/usr/sbin/mariadbd", [
                "--no-defaults", "--datadir=\(directory.path("data"))", "--socket=\(directory.path("mysqld.sock"))",
                "--pid-file=\(directory.path("mysqld.pid"))", "--log-error=\(directory.path("error.log"))",
                "--bind-address=127.0.0.1", "--port=\(port)", "--skip-name-resolve",
                "--secure-file-priv=\(directory.path)",
                // Not UTC, as many servers are not: a session that did not ask for UTC reads TIMESTAMPs shifted.
                "--default-time-zone=+05:00",
            ] + asRoot + fast)
            if waitUntilReady(process, socket: directory.path("mysqld.sock"), port: port) {
                let server = MariaDBServer(port: port, password: "pw-\(UUID().uuidString.prefix(12))",
                                           directory: directory, process: process)
                try server.rootSQL("""
                    CREATE USER '\(server.user)'@'127.0.0.1' IDENTIFIED BY '\(server.password)';
                    GRANT ALL ON *.* TO '\(server.user)'@'127.0.0.1';
                    """)
                return server
            }
            process.stop(signal: SIGKILL)
            lastError = (try? String(contentsOfFile: directory.path("error.log"), encoding: .utf8)) ?? ""
        }
        throw Unavailable(description: "mariadbd did not start: \(lastError.suffix(2000))")
    }

    private init(port: Int, password: String, directory: TemporaryDirectory, process: Process) {
        self.port = port
        self.password = password
        self.directory = directory
        self.process = process
    }

    /// A server whose set-up failed after it started is killed too.
    deinit { stop() }

    /// Runs `body` with a server started for it as `current`, and kills the server afterwards: a
    /// suite's scope.
    public static func serving(_ body: @Sendable () async throws -> Void) async throws {
        let server = try start()
        defer { server.stop() }
        try await $current.withValue(server) { try await body() }
    }

    /// Kills the server (its data is thrown away, so no clean shutdown is needed); the directory goes
    /// with this value.
    public func stop() { process.stop(signal: SIGKILL) }

    private static func waitUntilReady(_ process: Process, socket: String, port: Int) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            if FileManager.default.fileExists(atPath: socket), LoopbackPort.waitUntilListening(port, timeout: 0.2) {
                return true
            }
            usleep(50_000)
        }
        return false
    }

    /// Runs SQL as root over the server's socket with the `mariadb` client (an implementation apart
    /// from the code under test), in `database` when given; returns its rows, tab-separated, NULL as
    /// `NULL`.
    @discardableResult
    public func rootSQL(_ sql: String, database: String? = nil) throws -> String {
        let input = Pipe()
        let arguments = ["--no-defaults", "--socket=\(directory.path("mysqld.sock"))", "--user=root",
                         "--batch", "--skip-column-names", "--default-character-set=utf8mb4"] + (database.map { [$0] } ?? [])
        let writer = Thread {
            input.fileHandleForWriting.write(Data(sql.utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let result = try Command.tool("mariadb", arguments, standardInput: input)
        guard result.status == 0 else { throw CommandFailed(command: "mariadb: \(sql.prefix(200))", result: result) }
        return result.stdout
    }

    /// A root session in `database` that has run `sql` (say, `BEGIN; SELECT … FOR UPDATE;`) and holds
    /// on to it, with any transaction and lock it opened, until `release()`.
    public func holdSession(_ sql: String, database: String) throws -> HeldSession {
        let input = Pipe(), output = Pipe()
        let process = try Command.start("/usr/bin/mariadb", [
            "--no-defaults", "--socket=\(directory.path("mysqld.sock"))", "--user=root", "--batch", "--skip-column-names",
            "--unbuffered", database,
        ], standardInput: input, standardOutput: output)
        let session = HeldSession(process: process, input: input)
        input.fileHandleForWriting.write(Data((sql + "\nSELECT 'held';\n").utf8))
        let said = Self.read(output, until: "held\n", seconds: 30)
        guard said.contains("held\n") else {
            session.release()
            throw Unavailable(description: "the held session did not run: \(said)")
        }
        return session
    }

    /// What `pipe` says until it has said `end`, it ends, or `seconds` pass.
    private static func read(_ pipe: Pipe, until end: String, seconds: Double) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 512)
        while !text.contains(end), Date() < deadline {
            var ready = pollfd(fd: pipe.fileHandleForReading.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) >= 0 else { break }
            guard ready.revents != 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(ready.fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return text
    }

    /// A new empty database for one test, so that tests sharing the server do not meet.
    public func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try rootSQL("CREATE DATABASE `\(name)`")
        return name
    }
}

/// A `mariadb` client session kept open (see `MariaDBServer.holdSession`); ended at the latest when
/// the value goes away, which rolls back what it left open.
public final class HeldSession {
    private let process: Process
    private let input: Pipe
    private var released = false

    init(process: Process, input: Pipe) {
        self.process = process
        self.input = input
    }

    deinit { release() }

    /// Ends the session: the client reads the end of its input and quits.
    public func release() {
        guard !released else { return }
        released = true
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
