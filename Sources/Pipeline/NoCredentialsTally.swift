import APNs

/// The rows `NoCredentialsForTopic` by (topic, environment): stderr names each pair once, and
/// summary.json's `no_credentials` counts their rows. The reader of a run and a dry run keep one
/// each, so both say the same about the same input.
struct NoCredentialsTally {
    private(set) var rows: [NoCredentialsKey: Int] = [:]

    /// One more such row; the first of its pair is named through `warn`.
    mutating func note(topic: String?, _ environment: APNsEnvironment, warn: (String) -> Void) {
        let key = NoCredentialsKey(topic: topic ?? "", environment: environment)
        if rows[key] == nil {
            warn("warning: no key or certificate serves topic \(topic ?? "(none)") in \(environment.rawValue): its rows are "
                 + "rejected NoCredentialsForTopic (summary.json's no_credentials counts them)")
        }
        rows[key, default: 0] += 1
    }

    /// As `GroupCounts.noCredentials` holds them, in a stable order.
    static func counts(_ rows: [NoCredentialsKey: Int]) -> [(topic: String, environment: String, rows: Int)] {
        rows.map { ($0.key.topic, $0.key.environment.rawValue, $0.value) }
            .sorted { ($0.topic, $0.environment) < ($1.topic, $1.environment) }
    }
}

/// A (topic, environment) pair no credential serves.
struct NoCredentialsKey: Hashable, Sendable {
    var topic: String
    var environment: APNsEnvironment
}
