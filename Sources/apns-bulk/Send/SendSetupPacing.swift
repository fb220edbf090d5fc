import Pipeline

extension SendSetup {
    /// `--rate` and `--spread`: one or the other, a positive rate, a duration with units, and for
    /// `--spread` an input the prescan counts (the rate is its row count over the duration).
    /// `--spread 0s` (any zero duration) means no spread, as if it were not given.
    static func pace(_ command: SendCommand, configuration: inout CampaignConfiguration) throws {
        var spread: (text: String, seconds: Double)?
        if let text = command.spread {
            guard let seconds = PacerDuration.seconds(parsing: text) else {
                throw RunFailure.usage("--spread \(text): give a duration with units (h, m and s, largest first), such as 90s, 30m, 2h or 1h30m; 0s means no spread")
            }
            if seconds > 0 { spread = (text, seconds) }
        }
        if command.rate != nil && spread != nil {
            throw RunFailure.usage("--rate and --spread both set the pace: give one (--rate N per second, or --spread DURATION for the whole campaign)")
        }
        if let rate = command.rate {
            guard rate > 0, rate.isFinite else {
                throw RunFailure.usage("--rate \(rate): give a positive number of notifications per second, such as 500 or 0.5")
            }
            configuration.rate = rate
        }
        if let spread {
            guard configuration.prescan else {
                let why = command.noPrescan ? "--no-prescan is given" : "--input \(command.input) is a stream (stdin or a pipe), read only once"
                throw RunFailure.usage("--spread \(spread.text): it picks the rate from the row count, which the prescan finds, "
                                       + "and \(why): give --rate N instead, or a regular file without --no-prescan")
            }
            configuration.spreadSeconds = spread.seconds
        }
    }
}
