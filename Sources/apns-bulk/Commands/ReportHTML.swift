import Pipeline
import Report

/// `report --html` and `--compare`: the logs read again with their sidecars and summaries, and
/// the page written. A log that cannot be read is a usage error naming it (exit 1); a missing
/// sidecar or summary only makes the page show less.
enum ReportHTML {
    static func campaign(_ logs: [String], to path: String) throws {
        let page = ReportPage.render(ReportCampaign(runs: try logs.map(load)))
        try write(page, to: path)
    }

    static func compare(_ a: String, _ b: String, to path: String) throws {
        let page = ReportPage.render(compare: ReportCampaign(runs: [try load(a)]), ReportCampaign(runs: [try load(b)]), names: (a, b))
        try write(page, to: path)
    }

    private static func load(_ path: String) throws -> ReportRun {
        do { return try ReportRun.load(path: path) } catch { throw RunFailure.usage(error.description) }
    }

    private static func write(_ page: String, to path: String) throws {
        do { try ReportPageFile.write(page: page, to: path) } catch {
            throw RunFailure.usage("cannot write --html \(path): \(error); give a writable path")
        }
        writeStandardError("apns-bulk: wrote \(path)\n")
    }
}
