import APNs
import Synchronization

/// Whether APNs has shown a credential group's environment to be its tokens' own, and the
/// BadDeviceToken answers the group holds back until it has (docs/resume-and-bad-nights.md: the cleanup list names
/// only dead tokens).
///
/// A token of the other environment (sandbox sent to production, or the reverse) is answered
/// BadDeviceToken though its device is alive, so that answer proves a token dead only where the
/// environment is right. The result log is append-only, one record per row, so the decision comes
/// before the record: a group's BadDeviceToken records wait here until its first 200 or 410, which
/// releases them as `bad_token` (later ones are recorded at once). `window` of them with no such
/// answer is the wrong-environment verdict: they, and the group's BadDeviceToken answers after it,
/// end `aborted` `WrongEnvironment` (not in dead-tokens.csv; `--resume` sends them again), and the
/// caller stops the group, unless `--environment-fallback` keeps it going. A run that has nothing
/// left to answer while rows are held gives them the same verdict (`judgeAtEnd`). So at most
/// `window` records are held per group, and only before the proof.
///
/// `--environment-fallback` moves a row answered BadDeviceToken to the other environment; one
/// refused there too is dead when either environment was proven (by any of its groups): a token
/// refused where the environment is shown live is not that environment's, so it is the other's or
/// dead. Only a row refused in two unproven environments ends `aborted`.
///
/// A broadcast's channels are the same case (`Held.channelNotRegistered`): a channel is known only
/// in the environment that created it, so ChannelNotRegistered waits for a 200 (a channel has no
/// 410) before it lists the channel in dead-channels.csv.
///
/// Sendable: two atomics and a Mutex. After the proof a worker keeps a flag of its own and never
/// comes here for a 200.
final class EnvironmentProof: Sendable {
    /// BadDeviceToken answers without a 200 or 410 that make the verdict.
    static let defaultWindow = 100

    /// The answer held back, and the answers that prove the environment.
    struct Held: Sendable, Equatable {
        /// APNs' reason of the records held.
        let reason: Reason
        /// A 410 proves the environment as a 200 does (a device token's Unregistered; a channel has none).
        let provenByUnregistered: Bool

        /// A device push's: BadDeviceToken until a 200 or 410.
        static let badDeviceToken = Held(reason: .badDeviceToken, provenByUnregistered: true)
        /// A broadcast's: ChannelNotRegistered until a 200.
        static let channelNotRegistered = Held(reason: .channelNotRegistered, provenByUnregistered: false)

        /// Whether an answer of `status` proves the environment.
        @inline(__always)
        func proves(status: Int) -> Bool { status == 200 || (provenByUnregistered && status == 410) }
    }

    let window: Int
    let held: Held
    /// The verdict stops the group's sending (false under `--environment-fallback`, which tries
    /// the other environment rather than stop).
    let stopsGroup: Bool
    let environment: APNsEnvironment
    /// The run's environments proven so far (shared by its groups).
    private let environments: ProvenEnvironments
    private let proven = Atomic<Bool>(false)
    private let heldCount = Atomic<Int>(0)
    private let state = Mutex(State())

    private struct State {
        var held: [RowResult] = []
        /// BadDeviceToken answers before the proof, held or judged.
        var answers = 0
        /// The verdict was reached without a proof: later BadDeviceToken answers end aborted too.
        var judged = false
        /// Rows ended `aborted` `WrongEnvironment` here.
        var endedUnproven = 0
    }

    /// What becomes of one BadDeviceToken record handed to `hold`.
    enum Decision {
        /// Held: nothing to record now.
        case held
        /// Record this now (the group was proven meanwhile, or judged before).
        case record(RowResult)
        /// This answer made the verdict: record these (the held rows and this one, `judged`), and
        /// stop the group when `stopsGroup`; `answers` BadDeviceToken answers came unproven.
        case verdict(answers: Int, records: [RowResult])
    }

    init(window: Int = EnvironmentProof.defaultWindow, held: Held = .badDeviceToken, stopsGroup: Bool = true,
         environment: APNsEnvironment = .production, environments: ProvenEnvironments = ProvenEnvironments()) {
        self.window = max(1, window)
        self.held = held
        self.stopsGroup = stopsGroup
        self.environment = environment
        self.environments = environments
    }

    /// A 200 or 410 came for this group (one load once it is known).
    var isProven: Bool { proven.load(ordering: .acquiring) }

    /// Records held now.
    var heldRows: Int { heldCount.load(ordering: .acquiring) }

    /// Rows ended `aborted` `WrongEnvironment` (by the verdict, after it, or at the run's end).
    var endedUnproven: Int { state.withLock { $0.endedUnproven } }

    /// A 200 or 410 of this group: its environment is right. Returns the records held until now,
    /// `bad_token` for good (empty for every call but the first).
    func prove() -> [RowResult] {
        guard !isProven else { return [] }
        return state.withLock { state in
            guard !proven.load(ordering: .relaxed) else { return [] }
            proven.store(true, ordering: .releasing)
            environments.prove(environment)
            state.judged = false
            return take(&state)
        }
    }

    /// A record of this group answered `held.reason` (its token in storage of its own: it may wait).
    func hold(_ record: RowResult) -> Decision {
        state.withLock { state in
            if proven.load(ordering: .relaxed) { return .record(record) }
            state.answers += 1
            if state.judged { return .record(judged(record, &state)) }
            state.held.append(record)
            heldCount.add(1, ordering: .releasing)
            guard state.held.count >= window else { return .held }
            state.judged = true
            return .verdict(answers: state.answers, records: take(&state).map { judged($0, &state) })
        }
    }

    /// The run has no row left that could prove the group: what is held ends `aborted`
    /// `WrongEnvironment`, as the verdict would have it.
    func judgeAtEnd() -> [RowResult] {
        state.withLock { state in
            take(&state).map { judged($0, &state) }
        }
    }

    private func take(_ state: inout State) -> [RowResult] {
        defer {
            state.held = []
            heldCount.store(0, ordering: .releasing)
        }
        return state.held
    }

    /// A held record once the group is judged unproven: `bad_token` still when `--environment-fallback`
    /// moved it here from an environment proven live, else `unproven`.
    private func judged(_ record: RowResult, _ state: inout State) -> RowResult {
        if record.fallbackFrom != 0 && environments.isProven(code: record.fallbackFrom) { return record }
        state.endedUnproven += 1
        return Self.unproven(record)
    }

    /// A BadDeviceToken answer that proves nothing: the row is not done, and `--resume` sends it
    /// again. Its record keeps APNs' answer (status, apns-id, latency).
    static func unproven(_ record: RowResult) -> RowResult {
        record.with(outcome: .aborted, reason: LocalReason.wrongEnvironment.rawValue)
    }
}

/// The environments some credential group of the run has proven (a 200 or 410), for rows
/// `--environment-fallback` moved (`EnvironmentProof`). Sendable: two atomics.
final class ProvenEnvironments: Sendable {
    private let production = Atomic<Bool>(false)
    private let sandbox = Atomic<Bool>(false)

    init() {}

    func prove(_ environment: APNsEnvironment) {
        if environment == .production {
            production.store(true, ordering: .releasing)
        } else {
            sandbox.store(true, ordering: .releasing)
        }
    }

    /// `code` as `RowResult.fallbackFrom` holds an environment.
    func isProven(code: UInt8) -> Bool {
        switch RowResult.environment(code: code) {
        case .production: production.load(ordering: .acquiring)
        case .sandbox: sandbox.load(ordering: .acquiring)
        case nil: false
        }
    }
}
