import Foundation

/// campaign.json in `--out`: written before the first row is sent, so that `--resume` can tell the
/// campaign is there, check the input is the same file, and count what crashes made it resend.
/// Rows are numbered by their place in the input alone (no option renumbers them), so the input's
/// fingerprint is all that row numbering depends on.
struct CampaignRecord: Codable, Equatable {
    var format = 1
    /// The input as `--input` named it (for messages; the fingerprint decides).
    var input: String
    /// nil when the input was a pipe, a device or stdin: such a campaign cannot be resumed.
    var fingerprint: InputFingerprint?
    /// How the fingerprint was taken, for a reader of the file.
    var fingerprintMethod = "size, and SHA-256 of the whole file up to 4 MiB or of its first and last MiB and 64 evenly spaced 4 KiB blocks"
    /// The latest run's connections × max streams: what it may have had in flight when it ended
    /// (kept for readers of the file; `sent-rows` now says exactly what was sent).
    var inFlightLimit: Int
    /// Runs of this campaign so far, the first included.
    var runs = 1
    /// Rows sent again after crashes, over every resume so far: exactly those a crash lost (`CrashLoss`).
    var resentAfterCrash = 0
    /// `--shard K/N` as `K/N`; absent for a campaign of every row. A resume must give the same.
    var shard: String?

    enum CodingKeys: String, CodingKey {
        case format, input, fingerprint, runs, shard
        case fingerprintMethod = "fingerprint_method"
        case inFlightLimit = "in_flight_limit"
        case resentAfterCrash = "resent_after_crash"
    }

    static func read(path: String) throws(CampaignDirectoryError) -> CampaignRecord {
        // Foundation's errors would reach the user as "NSCocoaErrorDomain error 260": the
        // system's reason and the decoder's own words instead.
        guard let data = FileManager.default.contents(atPath: path) else {
            let code = access(path, R_OK) == 0 ? EIO : errno
            throw .unreadableRecord(path: path, detail: String(cString: strerror(code)))
        }
        do {
            return try JSONDecoder().decode(CampaignRecord.self, from: data)
        } catch let error as DecodingError {
            throw .unreadableRecord(path: path, detail: "not the JSON apns-bulk writes (\(Self.describe(error)))")
        } catch {
            throw .unreadableRecord(path: path, detail: "not the JSON apns-bulk writes")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, _): "no \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            (context.codingPath.map(\.stringValue).last.map { "\($0): " } ?? "") + context.debugDescription
        @unknown default: "unreadable"
        }
    }

    /// Written to a temporary name and renamed, so a crash leaves the old file or the new one.
    func write(path: String) throws(CampaignDirectoryError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            var bytes = [UInt8](try encoder.encode(self))
            bytes.append(0x0A)
            try OutputFile.write(bytes, to: path, atomically: true)
        } catch let error as OutputFileError {
            throw .output(path: path, detail: String(cString: strerror(error.errno)))
        } catch {
            throw .output(path: path, detail: "cannot encode it: \(error)")
        }
    }
}
