import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Transport

/// What the campaign's threads share: the configuration, the run control, the two hand-off
/// queues, and the health of the endpoints. Everything mutable is an atomic or behind a Mutex.
final class CampaignShared: Sendable {
    let configuration: CampaignConfiguration
    let control: RunControl
    /// Reader → workers: notifications to send.
    let work: HandOffQueue<Job>
    /// Workers and reader → writer: final records.
    let outcomes: HandOffQueue<RowResult>
    /// The reader's rules for rows; its run headers are what the workers send for a job without
    /// headers of its own.
    let decoder: RowDecoder
    /// What the rows not yet done become when the run stops.
    let stop: RunStop
    /// `--rate` (or the rate `--spread` chose): nil for a run as fast as APNs answers.
    let pacer: Pacer?
    /// The credential groups (`CredentialGroup`): one, the run's own, without `credentials`.
    let groups: [CredentialGroup]
    /// Which group a row goes to; nil for a one-credential run.
    let router: CredentialRouter?
    /// Records name their group's environment and key: more than one credential or environment in play.
    let labels: RecordLabels?
    /// `sent-rows`: the workers mark each row as they hand it to a connection; nil in a run with no
    /// campaign directory of its own.
    let sentRows: SentRows?

    /// Connections the groups were given in all (`ConnectionPlan`); 0 for a one-credential run.
    let plannedConnections = Atomic<Int>(0)
    /// Rows `NoCredentialsForTopic` by (topic, environment), as the reader counted them.
    let noCredentials = Mutex<[NoCredentialsKey: Int]>([:])
    var noCredentialCounts: [(topic: String, environment: String, rows: Int)] {
        NoCredentialsTally.counts(noCredentials.withLock { $0 })
    }

    private let readyConnections = Atomic<Int>(0)
    private let endpoints: Mutex<[EndpointHealth]>

    struct EndpointHealth {
        var everReady = false
        var configurationFailure: String?
        /// The last lookup of the endpoint's name failed (nil once one succeeds).
        var lookupFailure: LookupFailure?
        /// Why the last connection that ended before it was ready failed (nil once one is ready).
        var connectFailure: EndpointFailure?
        /// The kinds of failure a warning has named already (`EndpointFailure.kind`).
        var warned: Set<String> = []
    }

    /// A failed DNS lookup; `definite` when DNS answered that the name does not exist or has no
    /// address (asking again will not help), not when it did not answer.
    struct LookupFailure {
        var host: String
        var reason: String
        var definite: Bool
    }

    init(configuration: CampaignConfiguration, control: RunControl, template: BoundPayloadTemplate? = nil,
         sentRows: SentRows? = nil) {
        self.configuration = configuration
        self.sentRows = sentRows
        self.control = control
        work = HandOffQueue(capacity: 8192)
        outcomes = HandOffQueue(capacity: 16384)
        decoder = RowDecoder(defaults: configuration.defaults, defaultPayload: configuration.defaultPayload,
                             auth: configuration.authentication.kind, template: template,
                             broadcast: configuration.broadcastRows)
        stop = RunStop(control: control, work: work, outcomes: outcomes)
        pacer = configuration.rate.map { Pacer(rate: $0, grants: configuration.pacerGrants) }
        groups = CredentialGroup.groups(for: configuration, run: control, work: work, stop: stop, outcomes: outcomes,
                                        refusals: refusals)
        router = configuration.credentials.isEmpty ? nil : CredentialRouter(configuration: configuration)
        labels = Self.labelsRecords(configuration) ? RecordLabels(groups: groups) : nil
        endpoints = Mutex(Array(repeating: EndpointHealth(), count: configuration.endpoints.count))
    }

    /// More than one credential or environment is in play (records then carry `environment` and
    /// `key_id`): several credentials, one serving both environments, endpoints of both, or fallback.
    static func labelsRecords(_ configuration: CampaignConfiguration) -> Bool {
        guard !configuration.credentials.isEmpty else { return false }
        return configuration.credentials.count > 1 || configuration.environmentFallback
            || configuration.credentials.contains { $0.environment == nil && Set(configuration.endpointEnvironments).count > 1 }
            || Set(configuration.endpointEnvironments).count > 1
    }

    var readyConnectionCount: Int { readyConnections.load(ordering: .relaxed) }

    /// Run-wide values APNs refused for good, a one-credential run's (its one group's); with
    /// several credentials each group has its own (`CredentialGroup.refusals`).
    let refusals = RunWideRefusals()

    func noteConnectionReady(endpointIndex: Int) {
        readyConnections.add(1, ordering: .relaxed)
        endpoints.withLock {
            $0[endpointIndex].everReady = true
            $0[endpointIndex].connectFailure = nil
        }
    }

    func noteConnectionDown() {
        readyConnections.subtract(1, ordering: .relaxed)
    }

    /// Returns once no connection is ready (each closed after its goodbye), or after `timeoutSeconds`.
    func waitForConnectionsToClose(timeoutSeconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
        while readyConnectionCount > 0 && ContinuousClock.now < deadline { usleep(500) }
    }

    /// A failed connect. TLS verification or ALPN failing, or a server that does not speak TLS, on
    /// an endpoint that never worked is a configuration error: retrying cannot fix a CA file or a
    /// port. On every endpoint, the run stops at once; on some, the endpoint is dropped with a
    /// warning (once) and the others go on. Returns whether the endpoint is dropped. `proxy`: the
    /// CONNECT proxy failed, and the stop names it rather than TLS.
    @discardableResult
    func noteConnectionFailure(endpointIndex: Int, detail: String, configurationError: Bool, proxy: Bool = false) -> Bool {
        guard configurationError else { return false }
        let (dropped, warn, everywhere) = endpoints.withLock { health -> (Bool, Bool, Bool) in
            guard !health[endpointIndex].everReady else { return (false, false, false) }
            let first = health[endpointIndex].configurationFailure == nil
            health[endpointIndex].configurationFailure = detail
            return (true, first, health.allSatisfy { !$0.everReady && $0.configurationFailure != nil })
        }
        if everywhere {
            control.stop(proxy ? .proxyFailed(detail: detail) : .tlsFailedEverywhere(detail: detail))
        } else if warn {
            self.warn("warning: dropped endpoint \(configuration.endpoints[endpointIndex]) for this run: \(detail)")
        }
        return dropped
    }

    /// A line on stderr. With the progress line on, it first returns to the line's start, so the
    /// warning replaces the progress text instead of running on after it; a log gets no stray CR.
    func warn(_ line: String) {
        let bytes = Array(((configuration.showProgress ? "\r" : "") + line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// A lookup of endpoint `endpointIndex`'s name: `failure` nil when it resolved. A name that
    /// does not exist on every endpoint, none of which ever worked, stops the run at once (a typo
    /// in --endpoint, not an outage); one that DNS does not answer is waited for, up to
    /// `--unreachable-timeout` (`stopCauseWhenUnreachable`).
    func noteLookup(endpointIndex: Int, failure: LookupFailure?) {
        let names = endpoints.withLock { health -> [String]? in
            health[endpointIndex].lookupFailure = failure
            return Self.unresolved(health, definiteOnly: true)
        }
        if let names, let failure { control.stop(.cannotResolve(names: names, reason: failure.reason)) }
        if let failure { noteConnectFailure(endpointIndex: endpointIndex, EndpointFailure(lookup: failure)) }
    }

    /// A connection to endpoint `endpointIndex` ended before it was ready, or its name did not
    /// resolve: the first time for each cause, a warning names the endpoint and the cause, so that
    /// an endpoint that refuses or does not answer is not silent for `--unreachable-timeout`. Not
    /// when the run is stopping already (its stop says why), nor for a configuration error on an
    /// endpoint that never worked (it is dropped with a warning of its own, or the run stops).
    func noteConnectFailure(endpointIndex: Int, _ failure: EndpointFailure) {
        let first = endpoints.withLock { health -> Bool in
            health[endpointIndex].connectFailure = failure
            if failure.isConfigurationError && !health[endpointIndex].everReady { return false }
            return health[endpointIndex].warned.insert(failure.kind).inserted
        }
        guard first, !control.isStopping else { return }
        warn("warning: endpoint \(configuration.endpoints[endpointIndex]): \(failure.text); retrying "
             + "(said once per endpoint and cause)")
    }

    /// A connection to the endpoint has had no answer for `seconds` (a TCP connect or a TLS
    /// handshake still waiting: a firewall that drops, a port that accepts and says nothing). Said
    /// once per endpoint, long before the timeout names it; the progress line shows it meanwhile.
    func noteSlowConnect(endpointIndex: Int, seconds: Int, timeoutSeconds: Int) {
        let failure = EndpointFailure(kind: "no answer yet", text: "no answer for \(seconds) s to the TCP connect or TLS handshake",
                                      isConfigurationError: false)
        let first = endpoints.withLock { health -> Bool in
            guard health[endpointIndex].connectFailure == nil else { return false }
            health[endpointIndex].connectFailure = failure
            return health[endpointIndex].warned.insert(failure.kind).inserted
        }
        guard first, !control.isStopping else { return }
        warn("warning: endpoint \(configuration.endpoints[endpointIndex]): \(failure.text); still waiting, "
             + "up to \(timeoutSeconds) s (said once per endpoint)")
    }

    /// The endpoints whose last connection failed before it was ready, with the failure; only those
    /// never ready in this run when `neverReady` (summary.json's `unreachable_endpoints`), or among
    /// `indices` alone (a credential group's endpoints).
    func unreachableEndpoints(neverReady: Bool = false, indices: [Int]? = nil) -> [UnreachableEndpoint] {
        endpoints.withLock { health in
            (indices ?? Array(health.indices)).compactMap { index in
                guard let failure = health[index].connectFailure, !(neverReady && health[index].everReady) else { return nil }
                return UnreachableEndpoint(endpoint: configuration.endpoints[index].description, cause: failure.text)
            }
        }
    }

    /// While no connection is ready and the run is not stopping: what the progress line says it
    /// waits for, with the endpoints' last failures.
    var waitingForConnection: String? {
        guard readyConnectionCount == 0, !control.isStopping else { return nil }
        let failures = unreachableEndpoints()
        guard !failures.isEmpty else { return "waiting for a connection" }
        let named = failures.prefix(2).map { "\($0.endpoint) (\($0.cause))" }.joined(separator: ", ")
        return "waiting for a connection: \(named)\(failures.count > 2 ? " and \(failures.count - 2) more" : "")"
    }

    /// Why the run stops when every endpoint was unreachable for `--unreachable-timeout`: names
    /// that never resolved are a configuration error (exit 2), anything else gives up (exit 3),
    /// naming each endpoint and its last failure.
    func stopCauseWhenUnreachable(seconds: Double) -> StopCause {
        let lookups = endpoints.withLock { health in
            Self.unresolved(health, definiteOnly: false).map { ($0, health.compactMap(\.lookupFailure?.reason).last ?? "") }
        }
        if let (names, reason) = lookups { return .cannotResolve(names: names, reason: reason) }
        return .unreachable(seconds: seconds, endpoints: unreachableEndpoints())
    }

    /// The names of every endpoint when none ever worked and the last lookup of each failed.
    private static func unresolved(_ health: [EndpointHealth], definiteOnly: Bool) -> [String]? {
        var names: [String] = []
        for endpoint in health {
            guard !endpoint.everReady, let failure = endpoint.lookupFailure, failure.definite || !definiteOnly else { return nil }
            if !names.contains(failure.host) { names.append(failure.host) }
        }
        return names.isEmpty ? nil : names
    }
}
