import Foundation

/// The zstd command line tool: reads and writes our .zst files the way a user's script would,
/// independently of our own reader and writer.
public enum ZstdCLI {
    /// `zstd -dc -q file`.
    public static func decode(_ file: String) throws -> CommandResult {
        try Command.tool("zstd", ["-dc", "-q", file])
    }

    /// A JSON Lines file decoded: one object per line.
    public static func jsonLines(_ file: String) throws -> [[String: Any]] {
        let result = try decode(file)
        return try result.stdout.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
    }

    /// Compresses `source` to `source.zst`; returns that path.
    @discardableResult
    public static func compress(_ source: String) throws -> String {
        try Command.succeeding("zstd", ["-q", "-f", source, "-o", source + ".zst"])
        return source + ".zst"
    }
}
