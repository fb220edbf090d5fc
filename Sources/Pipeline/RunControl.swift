import Synchronization

/// Why a campaign stopped sending before its rows were done. The first cause recorded wins.
public enum StopCause: Sendable, Equatable {
    /// APNs refused the credentials (403 InvalidProviderToken, BadCertificate, ...): every further
    /// request would be refused too.
    case credentialsRefused(reason: String)
    /// `--abort-after` consecutive identical answers about the request's setup (BadTopic, ...).
    case misconfiguration(reason: String, consecutive: Int)
    /// The first answers of the run were all BadDeviceToken: sandbox tokens sent to production.
    case wrongEnvironment(answers: Int)
    /// TLS verification or ALPN failed on every endpoint: a configuration error.
    case tlsFailedEverywhere(detail: String)
    /// SIGINT or SIGTERM.
    case interrupted(signal: Int32)
    /// Every endpoint unreachable for `--unreachable-timeout`: the rest gave up (exit 3, not 2).
    case unreachable(seconds: Double)
    /// The input failed mid-run (with `--no-prescan`), or another error that ends the run.
    case fatal(detail: String)

    /// The outcome given to rows that did not finish because of this cause.
    public var outcomeForUnfinishedRows: Outcome {
        if case .unreachable = self { return .gaveUp }
        return .aborted
    }

    /// The `reason` written for rows that did not finish because of this cause.
    public var reasonForUnfinishedRows: String {
        switch self {
        case .credentialsRefused(let reason): reason
        case .misconfiguration(let reason, _): reason
        case .wrongEnvironment: "WrongEnvironment"
        case .tlsFailedEverywhere: "TLSFailed"
        case .interrupted: "Interrupted"
        case .unreachable: "Unreachable"
        case .fatal: "InputError"
        }
    }

    /// One line for the user: what happened and what to do.
    public var message: String {
        switch self {
        case .credentialsRefused(let reason):
            "APNs refused the credentials (\(reason)); stopped sending so the list is not burnt. "
                + Self.credentialAdvice(reason)
        case .misconfiguration(let reason, let count):
            "APNs answered \(reason) \(count) times in a row; stopped sending. This is about the "
                + "request's setup (topic, push type, priority, expiration), not the device tokens: "
                + "fix the flag or column and run again (see --abort-after)."
        case .wrongEnvironment(let answers):
            "the first \(answers) answers were all BadDeviceToken and none was delivered: these look "
                + "like tokens of the other APNs environment (sandbox vs production). Check --endpoint."
        case .tlsFailedEverywhere(let detail):
            "TLS failed on every endpoint: \(detail)"
        case .interrupted(let signal):
            "interrupted by signal \(signal); unfinished rows are recorded as aborted."
        case .unreachable(let seconds):
            "every endpoint was unreachable for \(seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)) s (--unreachable-timeout); the remaining "
                + "rows gave up with reason Unreachable."
        case .fatal(let detail):
            detail
        }
    }

    static func credentialAdvice(_ reason: String) -> String {
        switch reason {
        case "ExpiredProviderToken":
            "The provider token was still refused after a fresh one: check the machine's clock."
        case "InvalidProviderToken":
            "Check --key-file, --key-id and --team-id: the key must be the .p8 whose id is --key-id, of team --team-id."
        case "MissingProviderToken":
            "No provider token was accepted: give --key-file/--key-id/--team-id, or a client certificate."
        case "UnrelatedKeyIdInToken", "BadEnvironmentKeyIdInToken", "BadEnvironmentKeyInToken":
            "The key id does not fit this team or environment: check --key-id and --endpoint."
        case "BadCertificate", "BadCertificateEnvironment":
            "Check --cert-file/--p12-file: the certificate must be a valid push certificate for this environment (--endpoint)."
        case "Forbidden":
            "Check the credentials' permissions for this topic."
        default:
            "Check the credentials."
        }
    }
}

/// The run's shared state that every thread consults: whether to keep sending, and the
/// run-level detectors (misconfiguration streak, wrong environment). Read on every answer, so the
/// common case (a 200 while nothing is wrong) touches atomics only, never the lock.
public final class RunControl: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let cause = Mutex<StopCause?>(nil)
    private let streak = Mutex<(reason: String, count: Int)>(("", 0))
    private let streakActive = Atomic<Bool>(false)
    private let environment = Mutex<(answers: Int, badDeviceTokens: Int)>((0, 0))
    private let environmentDecided = Atomic<Bool>(false)

    /// Consecutive identical setup answers that stop the run (`--abort-after`).
    public let abortAfter: Int
    /// Answers after which the wrong-environment check is decided.
    public let environmentWindow: Int

    public init(abortAfter: Int = 100, environmentWindow: Int = 100) {
        self.abortAfter = max(1, abortAfter)
        self.environmentWindow = max(1, environmentWindow)
    }

    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    public var stopCause: StopCause? { cause.withLock { $0 } }

    /// Records why the run stops; returns false if it was already stopping (the first cause wins).
    @discardableResult
    public func stop(_ newCause: StopCause) -> Bool {
        let first = cause.withLock { current -> Bool in
            guard current == nil else { return false }
            current = newCause
            return true
        }
        if first { stopping.store(true, ordering: .releasing) }
        return first
    }

    /// Feeds one APNs answer to the run-level detectors. `setupReason` is the reason string when
    /// the answer is about the request's setup (BadTopic, ...), `badDeviceToken` when it is
    /// BadDeviceToken, `delivered` for a 200.
    public func recordAnswer(delivered: Bool, badDeviceToken: Bool, setupReason: String?) {
        if !environmentDecided.load(ordering: .relaxed) {
            recordForEnvironment(delivered: delivered, badDeviceToken: badDeviceToken)
        }
        if let setupReason {
            let count = streak.withLock { state -> Int in
                if state.reason == setupReason { state.count += 1 } else { state = (setupReason, 1) }
                return state.count
            }
            streakActive.store(true, ordering: .relaxed)
            if count >= abortAfter { stop(.misconfiguration(reason: setupReason, consecutive: count)) }
        } else if streakActive.load(ordering: .relaxed) {
            streak.withLock { $0 = ("", 0) }
            streakActive.store(false, ordering: .relaxed)
        }
    }

    private func recordForEnvironment(delivered: Bool, badDeviceToken: Bool) {
        let verdict = environment.withLock { state -> Int? in
            if delivered || !badDeviceToken {
                // One answer that is not BadDeviceToken settles it: the environment is right.
                environmentDecided.store(true, ordering: .relaxed)
                return nil
            }
            state.answers += 1
            state.badDeviceTokens += 1
            if state.answers >= environmentWindow {
                environmentDecided.store(true, ordering: .relaxed)
                return state.answers
            }
            return nil
        }
        if let answers = verdict { stop(.wrongEnvironment(answers: answers)) }
    }
}
