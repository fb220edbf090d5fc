/// The app's PostgreSQL database, over libpq.
///
/// The session reads in UTC, so a `timestamp` without time zone is an instant in UTC when it is
/// compared with a token's `unregistered_at`. Tables and columns are found in `pg_catalog`
/// (`PostgresCatalog.swift`); the cleanup's statements join a temporary scratch table to the
/// app's table on the token column (`PostgresCleanupStatements.swift`).
public final class PostgresDatabase: CleanupDatabase {
    let connection: PostgresConnection
    public let product: String

    /// Connects as `url` says. `password` (else the URL's) when there is one; without it, libpq
    /// looks in `PGPASSWORD` and `~/.pgpass` itself. The URL's parameters (`sslmode=require`, …)
    /// go to libpq as they are and win over the URL's parts and this type's defaults.
    public init(url: DatabaseURL, password: String?) throws(DatabaseError) {
        let password = password ?? url.password
        connection = try PostgresConnection(parameters: Self.connectionParameters(url, password: password),
                                            redactedURL: url.redacted, password: password)
        try connection.execute("SET TIME ZONE 'UTC'", what: "setting the session's time zone to UTC")
        // `DROP TABLE IF EXISTS` and the like would otherwise print NOTICE lines on stderr.
        try connection.execute("SET client_min_messages TO warning", what: "setting the session's messages")
        product = "PostgreSQL \(connection.serverVersion)"
    }

    static func connectionParameters(_ url: DatabaseURL, password: String?) -> [(keyword: String, value: String)] {
        var parameters: [(keyword: String, value: String)] = []
        if let host = url.host, !host.isEmpty { parameters.append(("host", host)) }
        if let port = url.port { parameters.append(("port", String(port))) }
        if let user = url.user, !user.isEmpty { parameters.append(("user", user)) }
        if !url.database.isEmpty { parameters.append(("dbname", url.database)) }
        if let password { parameters.append(("password", password)) }
        parameters += [("connect_timeout", "10"), ("application_name", "apns-bulk")]
        // The URL's query (`sslmode=require`, `host=/run/postgresql`, …) says the last word.
        for (name, value) in url.parameters {
            parameters.removeAll { $0.keyword == name }
            parameters.append((name, value))
        }
        // Swift's strings are UTF-8 both ways, whatever the URL says.
        parameters.removeAll { $0.keyword == "client_encoding" }
        parameters.append(("client_encoding", "UTF8"))
        return parameters
    }

    public func begin() throws(DatabaseError) {
        try connection.execute("BEGIN", what: "starting a transaction")
    }

    public func commit() throws(DatabaseError) {
        try connection.execute("COMMIT", what: "committing the batch")
    }

    public func rollback() throws(DatabaseError) {
        try connection.execute("ROLLBACK", what: "rolling the batch back")
    }
}
