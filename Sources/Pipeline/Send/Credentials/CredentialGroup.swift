import APNs
import Synchronization
import Transport

/// One credential group: the rows of one environment sent with one key or certificate, on
/// connections of their own. APNs ties a connection to the key of its first request and a key to
/// its environment, so each group keeps its own work queue, stream-slot rule, provider token,
/// connections (and their reconnect schedules) and stop: a slow or refused key holds up only its
/// own rows. A one-credential run has exactly one group, whose queue, control and stop are the
/// run's own, so it behaves (and costs) as before groups existed.
///
/// Sendable: its state is atomics, a Mutex and hand-off queues.
final class CredentialGroup: Sendable {
    /// The group's place in `CampaignShared.groups`.
    let index: Int
    let environment: APNsEnvironment
    /// The credential's label (key id, certificate subject); nil for a one-credential run.
    let label: String?
    /// The credential's position in `configuration.credentials`; -1 for a one-credential run.
    let credentialIndex: Int
    let authentication: CampaignConfiguration.Authentication
    /// The client context of this group's connections: the credential's certificate, or the run's.
    let tls: TLSContext
    /// The endpoints (indices into `configuration.endpoints`) that serve `environment`.
    let endpointIndices: [Int]
    /// Reader → this group's workers.
    let work: HandOffQueue<Job>
    /// This group's `--abort-after` streak and its stop; the run's own control for a
    /// one-credential run.
    let control: RunControl
    /// Whether a 200 or 410 showed this group's environment right, and the BadDeviceToken records
    /// held until one does (the wrong-environment verdict).
    let environmentProof: EnvironmentProof
    /// What this group's unfinished rows become when it (or the run) stops.
    let stop: RunStop
    /// The run-wide values APNs refused this group's key (the run's own set for a one-credential run).
    let refusals: RunWideRefusals
    /// An answer that is not a credentials 403 came: this group's connections open their stream
    /// slots fully from now on (APNs accepts this key).
    let settingsAccepted = Atomic<Bool>(false)
    /// This group's connections ready now, and whether any worker opened its pool: the watch's
    /// per-group `--unreachable-timeout`.
    let readyConnections = Atomic<Int>(0)
    let opened = Atomic<Bool>(false)
    /// Rows moved here from another group (`--environment-fallback`): a reactor thread hands them
    /// over without ever waiting, so this list is not bounded; `hasMoved` spares the lock.
    private let moved = Mutex<[Job]>([])
    let hasMoved = Atomic<Bool>(false)
    /// Wakes each of this group's workers (on its own reactor) for moved rows.
    private let wakers = Mutex<[@Sendable () -> Void]>([])

    init(index: Int, environment: APNsEnvironment, label: String?, credentialIndex: Int,
         authentication: CampaignConfiguration.Authentication, tls: TLSContext, endpointIndices: [Int],
         work: HandOffQueue<Job>, control: RunControl, stop: RunStop, refusals: RunWideRefusals,
         environmentProof: EnvironmentProof) {
        self.index = index
        self.environment = environment
        self.label = label
        self.credentialIndex = credentialIndex
        self.authentication = authentication
        self.tls = tls
        self.endpointIndices = endpointIndices
        self.work = work
        self.control = control
        self.environmentProof = environmentProof
        self.stop = stop
        self.refusals = refusals
    }

    /// `job` goes on in this group (its worker thread gave it up); never waits.
    func move(_ job: Job) {
        if stop.isStopping {
            stop.recordAndHand([job])
            return
        }
        moved.withLock { $0.append(job) }
        hasMoved.store(true, ordering: .releasing)
        for wake in wakers.withLock({ $0 }) { wake() }
    }

    /// The rows moved here so far, now the caller's.
    func takeMoved() -> [Job] {
        guard hasMoved.load(ordering: .acquiring) else { return [] }
        return moved.withLock { list in
            hasMoved.store(false, ordering: .relaxed)
            defer { list.removeAll() }
            return list
        }
    }

    func addWaker(_ wake: @escaping @Sendable () -> Void) {
        wakers.withLock { $0.append(wake) }
    }

    /// Whether this group has rows waiting anywhere outside its workers.
    var hasWaitingRows: Bool { hasMoved.load(ordering: .acquiring) || work.approximateCount > 0 }

    /// The group's rows end now as its stop says: nothing more is taken from its queue.
    func closeWork() {
        stop.closeWork()
        for job in takeMoved() { stop.recordAndHand([job]) }
    }
}

extension CredentialGroup {
    /// The groups of a run: one per credential and environment it serves (in the credentials'
    /// order, production first), or the run's one group when `credentials` is empty.
    static func groups(for configuration: CampaignConfiguration, run control: RunControl, work: HandOffQueue<Job>,
                       stop: RunStop, outcomes: HandOffQueue<RowResult>, refusals: RunWideRefusals) -> [CredentialGroup] {
        guard !configuration.credentials.isEmpty else {
            return [CredentialGroup(index: 0, environment: configuration.environment, label: nil, credentialIndex: -1,
                                    authentication: configuration.authentication, tls: configuration.tls,
                                    endpointIndices: Array(configuration.endpoints.indices), work: work,
                                    control: control, stop: stop, refusals: refusals,
                                    environmentProof: EnvironmentProof(held: configuration.heldUnproven,
                                                                       stopsGroup: !configuration.environmentFallback,
                                                                       environment: configuration.environment))]
        }
        var groups: [CredentialGroup] = []
        let layout = layout(of: configuration)
        // The one-credential run's 2,048 queued rows shared out, at least 512 a group: a queue
        // only covers the reader's turnaround, and rows queued longer are cold when sent.
        let capacity = min(2048, max(512, 2048 / max(1, layout.count)))
        let proven = ProvenEnvironments()
        for (credentialIndex, environment, endpoints) in layout {
            let credential = configuration.credentials[credentialIndex]
            let queue = HandOffQueue<Job>(capacity: capacity)
            let groupControl = RunControl(abortAfter: configuration.abortAfter)
            let authentication: CampaignConfiguration.Authentication
            let tls: TLSContext
            switch credential.secret {
            case .token(let source): (authentication, tls) = (.token(source), configuration.tls)
            case .certificate(let context): (authentication, tls) = (.certificate, context)
            }
            groups.append(CredentialGroup(
                index: groups.count, environment: environment, label: credential.label,
                credentialIndex: credentialIndex, authentication: authentication, tls: tls,
                endpointIndices: endpoints, work: queue, control: groupControl,
                stop: RunStop(control: groupControl, work: queue, outcomes: outcomes, run: control),
                refusals: RunWideRefusals(owner: "key \(credential.label) in \(environment.rawValue)"),
                environmentProof: EnvironmentProof(held: configuration.heldUnproven, stopsGroup: !configuration.environmentFallback,
                                                   environment: environment, environments: proven)))
        }
        return groups
    }

    /// The groups a configuration has, in order: (credential, environment, its endpoints), one per
    /// credential and environment it serves that some endpoint serves.
    static func layout(of configuration: CampaignConfiguration) -> [(credential: Int, environment: APNsEnvironment, endpoints: [Int])] {
        var layout: [(credential: Int, environment: APNsEnvironment, endpoints: [Int])] = []
        for (index, credential) in configuration.credentials.enumerated() {
            for environment in environments(of: credential) {
                let endpoints = endpointIndices(configuration, serving: environment)
                if !endpoints.isEmpty { layout.append((index, environment, endpoints)) }
            }
        }
        return layout
    }

    /// The groups a configuration has, before any is made (for the recorder's slots).
    static func count(for configuration: CampaignConfiguration) -> Int {
        configuration.credentials.isEmpty ? 1 : max(1, layout(of: configuration).count)
    }

    static func environments(of credential: CampaignCredential) -> [APNsEnvironment] {
        credential.environment.map { [$0] } ?? [.production, .sandbox]
    }

    /// `endpointEnvironments` empty: every endpoint serves the run's `environment`.
    static func endpointIndices(_ configuration: CampaignConfiguration, serving environment: APNsEnvironment) -> [Int] {
        if configuration.endpointEnvironments.isEmpty {
            return environment == configuration.environment ? Array(configuration.endpoints.indices) : []
        }
        return configuration.endpoints.indices.filter {
            $0 < configuration.endpointEnvironments.count && configuration.endpointEnvironments[$0] == environment
        }
    }
}
