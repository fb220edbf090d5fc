import ArgumentParser

/// The retry flags of `send` and `broadcast`, one declaration for both: a row answered 429 or 5xx
/// is tried again after a backoff, up to `--max-attempts` in all. Each command checks the values
/// with its own setup (send's and broadcast's messages and ranges differ).
struct RetryFlags: ParsableArguments {
    @Option(name: .customLong("max-attempts"), help: "Attempts per row before it gives up.")
    var maxAttempts = 5
    @Option(name: .customLong("retry-base-ms"), help: "First retry backoff (429, 5xx), doubled per attempt, with jitter.")
    var retryBaseMs = 500
    @Option(name: .customLong("retry-max-ms"), help: "Longest retry backoff.")
    var retryMaxMs = 60_000
}
