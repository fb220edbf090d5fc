/// apns-bulk's version: what `apns-bulk --version` prints and summary.json's `apns_bulk_version`
/// records, so that a campaign's results say which build sent them. One constant for both.
public enum Version {
    /// The release, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.1.0"
}
