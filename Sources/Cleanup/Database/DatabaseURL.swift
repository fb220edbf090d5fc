/// `--database`: where the app's table lives.
///
/// - `postgresql://user[:password]@host[:port]/db[?sslmode=…]` (also `postgres://`)
/// - `mysql://user[:password]@host[:port]/db` (MariaDB and MySQL; also `mariadb://`)
/// - `sqlite:PATH` or `sqlite:///abs/path`
///
/// The password, when the URL carries one, is kept apart and never printed: `redacted` is the
/// URL as messages show it.
public struct DatabaseURL: Sendable, Equatable {
    public enum System: String, Sendable {
        case postgresql = "PostgreSQL"
        case mysql = "MariaDB/MySQL"
        case sqlite = "SQLite"
    }

    public let system: System
    /// Percent-decoded parts (nil where the URL leaves them out).
    public let user: String?
    public let password: String?
    public let host: String?
    public let port: Int?
    /// The database name, or for SQLite the file's path.
    public let database: String
    /// The query's parameters, percent-decoded, in order (`sslmode=require`).
    public let parameters: [(name: String, value: String)]
    /// The URL with its password replaced by `***`, for messages.
    public let redacted: String

    public init(system: System, user: String?, password: String?, host: String?, port: Int?, database: String,
                parameters: [(name: String, value: String)], redacted: String) {
        self.system = system
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.parameters = parameters
        self.redacted = redacted
    }

    public static func == (a: DatabaseURL, b: DatabaseURL) -> Bool {
        a.system == b.system && a.user == b.user && a.password == b.password && a.host == b.host
            && a.port == b.port && a.database == b.database && a.redacted == b.redacted
            && a.parameters.map(\.name) == b.parameters.map(\.name) && a.parameters.map(\.value) == b.parameters.map(\.value)
    }
}
