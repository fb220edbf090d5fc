import ArgumentParser
import Pipeline

/// `apns-bulk gen`: synthetic campaigns for demos and benchmarks.
struct GenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gen",
        abstract: "Write a synthetic campaign CSV (optionally .csv.zst) for demos and benchmarks.",
        // ArgumentParser prints a usage line unwrapped: the generated one would be 210 columns.
        usage: "apns-bulk gen --rows <rows> --out <out> [<options>]")

    @Option(help: "Number of data rows.") var rows: Int
    @Option(help: "Output file: F.csv, or F.csv.zst for zstd.") var out: String
    @Option(help: "Share of invalid rows (0...1): bad hex, odd length, empty token, bad payload, bad priority.")
    var invalidRate: Double = 0
    @Option(help: "Share of valid rows whose token the mock reports as unregistered (0...1).")
    var unregisteredRate: Double = 0
    @Option(help: "File for the unregistered tokens, in the mock's format device_token,timestamp_ms. Default: none.")
    var unregisteredOut: String?
    @Option(help: "Approximate payload size in bytes.") var payloadBytes: Int = 200
    @Option(help: "Seed: the same seed gives the same campaign.") var seed: UInt64 = 1

    func validate() throws {
        guard rows >= 0 else { throw ValidationError("--rows must be 0 or more, got \(rows)") }
        guard (0...1).contains(invalidRate) else { throw ValidationError("--invalid-rate must be within 0...1, got \(invalidRate)") }
        guard (0...1).contains(unregisteredRate) else {
            throw ValidationError("--unregistered-rate must be within 0...1, got \(unregisteredRate)")
        }
        if unregisteredRate > 0 && unregisteredOut == nil {
            throw ValidationError("--unregistered-rate needs --unregistered-out FILE to write the tokens to")
        }
        guard payloadBytes >= 64 && payloadBytes <= 65536 else {
            throw ValidationError("--payload-bytes must be within 64...65536, got \(payloadBytes)")
        }
    }

    func run() throws {
        var options = CampaignGenerator.Options(rows: rows)
        options.invalidRate = invalidRate
        options.unregisteredRate = unregisteredRate
        options.payloadBytes = payloadBytes
        options.seed = seed
        var generator = CampaignGenerator(options: options)
        let totals: CampaignGenerator.Totals
        do {
            totals = try generator.write(to: out, unregisteredPath: unregisteredOut)
        } catch {
            throw RunFailure.usage("\(error)")
        }
        print("wrote \(totals.rows) rows to \(out): \(totals.invalid) invalid, \(totals.unregistered) unregistered"
              + (unregisteredOut.map { " (tokens in \($0))" } ?? ""))
    }
}
