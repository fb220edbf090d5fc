/// Where reading the input stopped early: a line that could not be read mid-run (only without the
/// prescan, which would have refused the file before sending). The rows before it were sent as
/// usual, the row at it is recorded `aborted` with reason `InputError`, the rows after it were
/// never read. summary.json says `input_stopped_at_line`.
public struct InputStop: Sendable, Equatable {
    /// The physical line (1-based, the header's included) where reading stopped.
    public let line: Int
    /// What was wrong there, as the prescan would have said it.
    public let error: InputFileError

    /// The reason recorded for the row at the unreadable line.
    static let reason = LocalReason.inputError.rawValue

    /// The line an error names, or `fallback` (the line reached) when it names none.
    init(error: InputFileError, fallback: Int) {
        self.error = error
        switch error {
        case .unclosedQuote(_, let line), .malformedQuoting(_, let line), .fieldTooLong(_, let line, _),
             .binary(_, let line):
            self.line = line
        default:
            self.line = fallback
        }
    }

    /// The record of the row at the unreadable line: its token could not be read.
    func record(row: Int) -> RowResult {
        RowResult(row: row, deviceToken: [], outcome: .aborted, reason: Self.reason)
    }

    /// One line of the summary `send` prints.
    public var message: String {
        "reading the input stopped at line \(line): \(error.description). The rows before it were sent; "
            + "the row there is recorded aborted (InputError), the rest of the input was not read."
    }
}
