import APNs

/// Each credential group's rows, counted by the prescan's scan as it passes over the file (the
/// `topic`, `environment` and `key_id` fields it captures, routed as the reader will route them),
/// so a several-key run needs no pass of its own for them: that pass parsed every field of every
/// row again, ~4,600 instructions a row of the ten-key benchmark. Rows a rule rejects are not
/// counted; rows that need an environment no endpoint serves are counted apart, per environment.
///
/// Used by the prescan's thread; read after it returns.
// @unchecked: written by the prescan and read by `prepareGroups`, both on the run's own thread;
// `prepareGroups` drops it before the columns reach the reader's.
final class GroupRowTally: @unchecked Sendable {
    let router: CredentialRouter
    private(set) var rows: [Int]
    private(set) var missing: [APNsEnvironment: Int] = [:]
    /// Set by the prescan when its scan went over every row; the counts are only good then.
    var isComplete = false
    /// `--topic`, for a row whose topic field is empty.
    private let defaultTopic: [UInt8]?

    init(router: CredentialRouter, groups: Int, defaultTopic: String?) {
        self.router = router
        rows = Array(repeating: 0, count: groups)
        self.defaultTopic = defaultTopic.map { Array($0.utf8) }
    }

    private init(router: CredentialRouter, groups: Int, defaultTopic: [UInt8]?) {
        self.router = router
        rows = Array(repeating: 0, count: groups)
        self.defaultTopic = defaultTopic
    }

    /// The same tally with nothing counted: each half of a prescan in halves counts its own.
    func emptyCopy() -> GroupRowTally {
        GroupRowTally(router: router, groups: rows.count, defaultTopic: defaultTopic)
    }

    /// The fields of `header` holding the `environment` and `key_id` columns (-1: none), as the
    /// CSV source finds them (names trimmed, any case); nil when either is named twice, which
    /// the scan leaves to the source's own reading.
    static func fields(of header: CSVHeader) -> (environment: Int, keyID: Int)? {
        func field(_ name: String) -> Int?? {
            let found = header.names.indices.filter { header.names[$0].trimmingSpaces.lowercased() == name }
            return found.count > 1 ? nil : .some(found.first)
        }
        guard let environment = field("environment"), let keyID = field("key_id") else { return nil }
        return (environment ?? -1, keyID ?? -1)
    }

    /// Adds the counts of `other` (the prescan's second half, `PrescanHalves`).
    func add(_ other: GroupRowTally) {
        for group in rows.indices { rows[group] += other.rows[group] }
        missing.merge(other.missing, uniquingKeysWith: +)
    }

    /// One data row's captured fields (`topic` empty: the run's default topic).
    func count(topic: UnsafeBufferPointer<UInt8>, environment: UnsafeBufferPointer<UInt8>?, keyID: UnsafeBufferPointer<UInt8>?) {
        let route = topic.isEmpty ? router.route(environment: environment, keyID: keyID, topic: defaultTopic)
            : router.route(environment: environment, keyID: keyID, topic: topic)
        switch route {
        case .group(let group): rows[group] += 1
        case .noEndpoint(let environment): missing[environment, default: 0] += 1
        case .rejected, .keyElsewhere: break
        }
    }
}
