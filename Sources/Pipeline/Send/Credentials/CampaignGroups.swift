import Foundation
import APNs
import Transport

/// The parts of a campaign run that exist only with several credentials (`credentials`): the
/// `environment` and `key_id` columns, the prescan's rows per group, the check that every
/// environment rows need has an endpoint, the workers per group, and the watch over each group's
/// own stop.
extension Campaign {
    /// Where the group columns are read from: the CSV source's extra columns after a payload
    /// template's, and their batch slots.
    struct GroupColumns {
        var extras: [String]
        var environmentSlot: Int?
        var keyIDSlot: Int?
        /// Rows per group from the prescan; nil without one.
        var rows: [Int]?
        /// Where the prescan counts them as it scans (`GroupRowTally`), in a run with several
        /// credentials and an unsharded prescan.
        var prescanCount: GroupRowTally?
    }

    /// `--environment-fallback` with the run's one credential: it becomes the one credential of
    /// both environments, so a row refused in one has a group to go to in the other. The binary
    /// protocol has one certificate and no groups (the command line refuses several).
    static func withFallbackCredential(_ configuration: CampaignConfiguration) -> CampaignConfiguration {
        var configuration = configuration
        if configuration.wireProtocol == .binary { configuration.credentials = [] }
        guard configuration.environmentFallback, configuration.credentials.isEmpty,
              configuration.wireProtocol == .http2 else { return configuration }
        switch configuration.authentication {
        case .token(let source):
            configuration.credentials = [CampaignCredential(label: source.keyID.value, secret: .token(source))]
        case .certificate:
            configuration.credentials = [CampaignCredential(label: "certificate", secret: .certificate(configuration.tls))]
        }
        return configuration
    }

    static func groupColumns(_ configuration: CampaignConfiguration) -> GroupColumns {
        var extras = configuration.payloadTemplate?.extraColumns ?? []
        guard !configuration.credentials.isEmpty else { return GroupColumns(extras: extras) }
        for name in ["environment", "key_id"] where !extras.contains(name) { extras.append(name) }
        let slot = { (name: String) in extras.firstIndex(of: name).map { CSVColumn.allCases.count + $0 } }
        let prescanCount = configuration.prescan && configuration.shard == nil
            ? GroupRowTally(router: CredentialRouter(configuration: configuration),
                            groups: CredentialGroup.layout(of: configuration).count, defaultTopic: configuration.defaults.topic)
            : nil
        return GroupColumns(extras: extras, environmentSlot: slot("environment"), keyIDSlot: slot("key_id"),
                            prescanCount: prescanCount)
    }

    /// Before anything is sent: with the prescan, each group's rows are counted and a row that
    /// needs an environment no endpoint serves stops the run (exit 1, naming it). Without one
    /// (a stream, `--no-prescan`), rows cannot be looked at first, so the run is refused when
    /// they might need such an environment: the run's own, or either when the input has an
    /// `environment` column.
    static func prepareGroups(_ columns: inout GroupColumns, header: CSVHeader, configuration: CampaignConfiguration)
        throws(SetupError) {
        guard !configuration.credentials.isEmpty else { return }
        let layout = CredentialGroup.layout(of: configuration)
        guard configuration.prescan else {
            let hasColumn = header.names.contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "environment" }
            for environment in APNsEnvironment.allCases
                where (environment == configuration.environment || hasColumn)
                    && CredentialGroup.endpointIndices(configuration, serving: environment).isEmpty {
                throw SetupError.noEndpoint(environment: environment, rows: nil)
            }
            return
        }
        let counted = columns.prescanCount
        columns.prescanCount = nil
        if let counted, counted.isComplete {
            if let (environment, count) = counted.missing.min(by: { $0.key < $1.key }) {
                throw SetupError.noEndpoint(environment: environment, rows: count)
            }
            columns.rows = counted.rows
            return
        }
        // The prescan's scan could not count (a field it could not capture, a header naming a
        // group column twice): a pass of its own, field by field as the reader parses.
        let router = CredentialRouter(configuration: configuration)
        var rows = [Int](repeating: 0, count: layout.count)
        var missing: [APNsEnvironment: Int] = [:]
        do {
            let source = try CSVSource(path: configuration.inputPath, extraColumns: columns.extras)
            while let batch = try source.nextBatch() {
                for index in batch.indices {
                    let topic = batch.field(.topic, at: index).flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
                        ?? configuration.defaults.topic
                    switch router.route(environment: columns.environmentSlot.flatMap { batch.field(slot: $0, at: index) },
                                        keyID: columns.keyIDSlot.flatMap { batch.field(slot: $0, at: index) }, topic: topic) {
                    case .group(let group): rows[group] += 1
                    case .noEndpoint(let environment): missing[environment, default: 0] += 1
                    case .rejected, .keyElsewhere: break
                    }
                }
            }
        } catch {
            throw SetupError.input(error)
        }
        if let (environment, count) = missing.min(by: { $0.key < $1.key }) { throw SetupError.noEndpoint(environment: environment, rows: count) }
        columns.rows = rows
    }

    /// One worker per group and reactor thread with connections of that group.
    func startGroupWorkers(shared: CampaignShared, recorder: RunRecorder, rows: [Int]?, threads: Int,
                           reactors: [Reactor]) -> [(group: Int, handle: WorkerHandle)] {
        let configuration = shared.configuration
        var shares = rows.map { ConnectionPlan.shares(total: configuration.connections, rows: $0) }
            ?? ConnectionPlan.evenShares(total: configuration.connections, groups: shared.groups.count)
        // A group without rows of its own may get rows moved to it (`--environment-fallback`):
        // it has a connection to open then (and opens none otherwise).
        if configuration.environmentFallback { shares = shares.map { max($0, 1) } }
        var handles: [(group: Int, handle: WorkerHandle)] = []
        for (thread, entries) in ConnectionPlan.assignments(groups: shared.groups, shares: shares, threads: threads).enumerated() {
            let reactor = reactors[thread]
            for (group, slots) in entries {
                let worker = Worker(reactor: reactor, shared: shared, index: group * threads + thread, recorder: recorder,
                                    group: group)
                let handle = WorkerHandle(reactor: reactor, worker: ThreadBound(worker))
                let box = ThreadBound(slots)
                reactor.execute { handle.worker.value.start(slots: box.value) }
                handles.append((group, handle))
            }
            // A thread with no connection of any group: nothing will ever stop its reactor.
            if entries.isEmpty {
                reactor.stop()
                reactor.join()
            }
        }
        shared.plannedConnections.store(shares.reduce(0, +), ordering: .relaxed)
        return handles
    }

    /// The watch's turn for groups: a group told to stop (its key refused, its streak of
    /// refusals) ends its own rows and says so, naming the key and environment; the others go on.
    /// A group whose connections were all down for `--unreachable-timeout` (its environment's
    /// endpoints unreachable, while other groups' work) gives up its rows as a run would.
    static func watchGroups(_ shared: CampaignShared, workers: [(group: Int, handle: WorkerHandle)], handled: inout [Bool],
                            downSince: inout [ContinuousClock.Instant?]) {
        let timeout = shared.configuration.unreachableTimeoutSeconds
        for group in shared.groups where !handled[group.index] && !group.control.isStopping {
            guard group.opened.load(ordering: .relaxed), group.readyConnections.load(ordering: .relaxed) == 0,
                  group.hasWaitingRows else {
                downSince[group.index] = nil
                continue
            }
            let since = downSince[group.index] ?? .now
            downSince[group.index] = since
            if ProgressLine.seconds(ContinuousClock.now - since) >= timeout {
                group.control.stop(.unreachable(seconds: timeout, endpoints: shared.unreachableEndpoints(indices: group.endpointIndices)))
            }
        }
        for group in shared.groups where !handled[group.index] && group.control.isStopping {
            handled[group.index] = true
            group.closeWork()
            for (number, handle) in workers where number == group.index {
                handle.reactor.execute { handle.worker.value.beginStopping() }
            }
            announceStop(of: group, shared)
        }
    }

    /// A run that ends before the watch's next turn (a short campaign) still names every group
    /// that stopped: what the watch did not handle is said now.
    static func announceUnhandledStops(_ shared: CampaignShared, handled: [Bool]) {
        for group in shared.groups where !handled[group.index] && group.control.isStopping { announceStop(of: group, shared) }
    }

    private static func announceStop(of group: CredentialGroup, _ shared: CampaignShared) {
        let key = "\(group.label ?? "the key") in \(group.environment.rawValue)"
        switch group.control.stopCause {
        case .credentialsRefused(let reason)?:
            shared.warn("APNs refused key \(key) (\(reason)): its unfinished rows end aborted \(reason); the other "
                        + "keys' rows go on (exit 2). \(StopCause.credentialAdvice(reason)) Then run the same command with --resume.")
        case let cause?:
            shared.warn("stopped sending with key \(key): \(cause.message) Its unfinished rows end "
                        + "\(cause.outcomeForUnfinishedRows.rawValue) \(cause.reasonForUnfinishedRows); the other keys' rows go on.")
        case nil:
            break
        }
    }
}
