#if canImport(Glibc)
import Glibc
#endif

/// What is wrong with a campaign file itself (not with one row). The sender stops with exit 1 on
/// these before anything is sent; each message names the file, the line where known, and a fix.
public enum InputFileError: Error, CustomStringConvertible, Equatable, Sendable {
    case missing(path: String)
    case unreadable(path: String, detail: String)
    case empty(path: String)
    case noHeader(path: String)
    case missingDeviceTokenColumn(path: String, found: [String])
    /// A broadcast's input (`apns-bulk broadcast`) without a `channel_id` column.
    case missingChannelIDColumn(path: String, found: [String])
    case duplicateColumn(path: String, name: String)
    /// Header field `column` (1-based) is not UTF-8; `name` shows it with U+FFFD for the bad bytes.
    case headerNotUTF8(path: String, column: Int, name: String)
    case unclosedQuote(path: String, line: Int)
    case malformedQuoting(path: String, line: Int)
    case fieldTooLong(path: String, line: Int, limit: Int)
    case binary(path: String, line: Int)
    case gzip(path: String)
    case truncatedZstd(path: String, frame: Int, cutBytes: Int)
    case corruptZstd(path: String, detail: String)
    /// Token auth with no `--topic` and no `topic` column: every row would be MissingTopic.
    case noTopicColumn(path: String)
    /// Token auth with no `--topic`, and this data row's topic is empty (found by the prescan).
    case emptyTopic(path: String, row: Int)
    /// A stop request (SIGINT/SIGTERM) ended the wait for a stream's input.
    case interrupted(path: String)

    /// One line for stderr: the input, the line where it applies, and what to do.
    public var description: String {
        switch self {
        case .missing(let path):
            return "\(path): no such file; check the --input path"
        case .unreadable(let path, let detail):
            return "\(path): cannot read the file (\(detail)); check its permissions"
        case .empty(let path):
            return "\(path): the file is empty; a campaign needs a header row with a device_token column"
        case .noHeader(let path):
            return "\(path): no header row (only blank lines); add a header naming the columns, e.g. device_token,payload"
        case .missingDeviceTokenColumn(let path, let found):
            let names = found.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ")
            return "\(path), line 1: the header has no device_token column (found \(names)); name the token column device_token"
        case .missingChannelIDColumn(let path, let found):
            let names = found.prefix(8).map { "\"\($0)\"" }.joined(separator: ", ")
            return "\(path), line 1: the header has no channel_id column (found \(names)); a broadcast's header is "
                + "channel_id,payload[,priority,expiration,apns_request_id]"
        case .duplicateColumn(let path, let name):
            return "\(path), line 1: the header names column \(name) twice; keep one"
        case .headerNotUTF8(let path, let column, let name):
            return "\(path), line 1: header field \(column) (\"\(name)\") is not valid UTF-8, so it names no column; "
                + "save the file as UTF-8 (a spreadsheet's \"CSV UTF-8\" export)"
        case .unclosedQuote(let path, let line):
            return "\(path), line \(line): a quoted field opened here never closes; close the quote (a quote inside a field is written as two quotes \"\")"
        case .malformedQuoting(let path, let line):
            return "\(path), line \(line): malformed quoting (a quote inside an unquoted field, or text after a closing quote); quote the whole field and double inner quotes (\"\")"
        case .fieldTooLong(let path, let line, let limit):
            return "\(path), line \(line): a field longer than \(limit / (1024 * 1024)) MiB starts here, most likely a quote that never closes; check the quoting on this line"
        case .binary(let path, let line):
            return "\(path), line \(line): a NUL byte: this is not a text CSV file; give a UTF-8 CSV, or a .csv.zst"
        case .gzip(let path):
            return "\(path): this is a gzip file; decompress it (gunzip) or recompress it with zstd (.csv.zst)"
        case .truncatedZstd(let path, let frame, let cutBytes):
            return "\(path): the .zst file is truncated (frame \(frame) cut after \(cutBytes) bytes); copy or compress it again"
        case .corruptZstd(let path, let detail):
            return "\(path): corrupt zstd data (\(detail)); check the file with `zstd -t`"
        case .noTopicColumn(let path):
            return "\(path), line 1: token authentication needs a topic for every row, and there is no --topic and no topic column; give --topic (the app's bundle id) or add a topic column"
        case .emptyTopic(let path, let row):
            return "\(path): data row \(row) has an empty topic column and there is no --topic; token authentication needs a topic for every row: give --topic (used where the topic column is empty) or fill the topic column"
        case .interrupted(let path):
            return "\(path): interrupted while waiting for input"
        }
    }

}

