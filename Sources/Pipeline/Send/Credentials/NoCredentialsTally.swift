import APNs

/// The rows `NoCredentialsForTopic` by (topic, environment): stderr names each pair once, and
/// summary.json's `no_credentials` counts their rows. The reader of a run and a dry run keep one
/// each, so both say the same about the same input.
struct NoCredentialsTally {
    private(set) var rows: [NoCredentialsKey: Int] = [:]
    /// The (key id, row environment) pairs already warned of.
    private var keysElsewhere: Set<NoCredentialsKey> = []

    /// One more such row; the first of its pair is named through `warn`.
    mutating func note(topic: String?, _ environment: APNsEnvironment, warn: (String) -> Void) {
        let key = NoCredentialsKey(topic: topic ?? "", environment: environment)
        if rows[key] == nil {
            warn("warning: no key or certificate serves topic \(topic ?? "(none)") in \(environment.rawValue): its rows are "
                 + "rejected NoCredentialsForTopic (summary.json's no_credentials counts them)")
        }
        rows[key, default: 0] += 1
    }

    /// One more row whose `key_id` names a credential restricted to the other environment than
    /// the row's `environment`: counted with its topic as `note` does (its reason is the same),
    /// but the first of each (key, environment) is named as what it is, not as a missing topic.
    mutating func note(topic: String?, _ environment: APNsEnvironment, keyElsewhere key: Int, router: CredentialRouter,
                       warn: (String) -> Void) {
        let credential = router.credential(key)
        if !keysElsewhere.contains(NoCredentialsKey(topic: credential.label, environment: environment)) {
            keysElsewhere.insert(NoCredentialsKey(topic: credential.label, environment: environment))
            let serves = credential.environment.map { "is restricted to \($0.rawValue)" } ?? "does not serve it"
            warn("warning: rows for \(environment.rawValue) (their environment column) name key_id \(credential.label), which "
                 + "\(serves): they are rejected NoCredentialsForTopic (summary.json's no_credentials counts them); fix "
                 + "the rows' environment, or their key_id (empty: the topic picks a key of \(environment.rawValue))")
        }
        rows[NoCredentialsKey(topic: topic ?? "", environment: environment), default: 0] += 1
    }

    /// As `GroupCounts.noCredentials` holds them, in a stable order.
    static func counts(_ rows: [NoCredentialsKey: Int]) -> [(topic: String, environment: String, rows: Int)] {
        rows.map { ($0.key.topic, $0.key.environment.rawValue, $0.value) }
            .sorted { ($0.topic, $0.environment) < ($1.topic, $1.environment) }
    }
}

/// A (topic, environment) pair no credential serves (or a key id and the environment it does not serve).
struct NoCredentialsKey: Hashable, Sendable {
    var topic: String
    var environment: APNsEnvironment
}
