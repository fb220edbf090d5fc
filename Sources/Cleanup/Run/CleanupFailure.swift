/// Why a cleanup stopped, in one line, with its exit status: 1 when nothing was changed (a bad
/// table or column, too many rows for `--max-affected`, a database that cannot be reached), 2 when
/// the database failed once the run was under way (the message says what was committed).
public struct CleanupFailure: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let status: Int32

    public init(_ description: String, status: Int32) {
        self.description = description
        self.status = status
    }

    static func usage(_ description: String) -> CleanupFailure { CleanupFailure(description, status: 1) }
}
