/// Why `--out` cannot take this run: a campaign is there already (and `--resume` was not given),
/// or `--resume` cannot continue it. Found before anything is sent (exit 1).
public enum CampaignDirectoryError: Error, CustomStringConvertible, Equatable {
    /// `found`: the campaign's files that are there (campaign.json, results.jsonl.zst or both).
    case campaignExists(directory: String, found: [String])
    case busy(directory: String)
    case inputNotRegular(path: String)
    case inputUnreadable(path: String, detail: String)
    case differentInput(directory: String, recordedPath: String, path: String)
    /// `--resume` with another `--shard` than the campaign's (nil: none).
    case differentShard(directory: String, recorded: String?, given: String?)
    case recordedInputNotRegular(directory: String, recordedPath: String)
    case logWithoutRecord(directory: String)
    case unreadableRecord(path: String, detail: String)
    case unreadableLog(detail: String)
    case output(path: String, detail: String)

    /// One line for stderr: what is wrong, and what to give instead.
    public var description: String {
        switch self {
        case .campaignExists(let directory, let found) where !found.contains("campaign.json"):
            "\(directory) already holds \(found.joined(separator: " and ")) but no campaign.json (a log of an older "
                + "apns-bulk, or not from apns-bulk): nothing was overwritten, and --resume cannot check its input; "
                + "give another --out DIR"
        case .campaignExists(let directory, let found):
            "\(directory) already holds a campaign (\(found.joined(separator: ", "))): nothing was overwritten; "
                + "add --resume to continue it (rows already recorded are skipped), or give another --out DIR"
        case .busy(let directory):
            "another apns-bulk is running the campaign in \(directory) (it holds the directory's lock): nothing was "
                + "sent; let it finish, or give another --out DIR"
        case .inputNotRegular(let path):
            "--resume needs the input to be a regular file (it reads the file again and skips the rows already "
                + "recorded); \(path) is a pipe, a device or stdin: write the campaign to a file first"
        case .inputUnreadable(let path, let detail):
            "cannot read \(path) to check it is the campaign's input: \(detail)"
        case .differentInput(let directory, let recordedPath, let path):
            "\(path) is not the input of the campaign in \(directory) (it was \(recordedPath); size or content differs): "
                + "--resume continues a campaign only with the same file; give that file, or another --out DIR"
        case .differentShard(let directory, let recorded, let given):
            "the campaign in \(directory) is " + (recorded.map { "shard \($0) (--shard \($0))" } ?? "not sharded (no --shard)")
                + ", and this run " + (given.map { "gives --shard \($0)" } ?? "gives no --shard")
                + ": a resume must send the same rows; give " + (recorded.map { "--shard \($0)" } ?? "no --shard")
                + ", or another --out DIR for this shard"
        case .recordedInputNotRegular(let directory, let recordedPath):
            "the campaign in \(directory) read \(recordedPath), a pipe or stdin, which cannot be read again: it cannot be "
                + "resumed; give another --out DIR"
        case .logWithoutRecord(let directory):
            "\(directory) holds results.jsonl.zst but no campaign.json (written by an older apns-bulk, or not by "
                + "apns-bulk): --resume cannot check the input is the same; give another --out DIR"
        case .unreadableRecord(let path, let detail):
            "cannot read \(path): \(detail); --resume needs the campaign.json its campaign began with"
        case .unreadableLog(let detail):
            "cannot resume: \(detail)"
        case .output(let path, let detail):
            "cannot write to the output directory \(path): \(detail); give a writable --out DIR"
        }
    }
}
