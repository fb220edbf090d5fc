import APNs

/// Why a campaign stopped sending before its rows were done. The first cause recorded wins.
public enum StopCause: Sendable, Equatable {
    /// APNs refused the credentials (403 InvalidProviderToken, BadCertificate, ...): every further
    /// request would be refused too.
    case credentialsRefused(reason: String)
    /// `answers` BadDeviceToken answers and not one 200 or 410: sandbox tokens sent to production
    /// (or the reverse). Those rows end `aborted`, out of dead-tokens.csv (`EnvironmentProof`).
    /// A broadcast's are ChannelNotRegistered answers and not one 200: another environment's channels.
    case wrongEnvironment(answers: Int, reason: Reason = .badDeviceToken)
    /// TLS verification or ALPN failed on every endpoint: a configuration error.
    case tlsFailedEverywhere(detail: String)
    /// The CONNECT proxy refused or could not be reached on every endpoint, none of which ever
    /// worked: the proxy URL, its credentials or its rules are wrong.
    case proxyFailed(detail: String)
    /// No endpoint's name resolves and none ever worked: a mistake in `--endpoint` (or a DNS
    /// setup that cannot find APNs), which waiting will not fix.
    case cannotResolve(names: [String], reason: String)
    /// SIGINT or SIGTERM.
    case interrupted(signal: Int32)
    /// Every endpoint unreachable for `--unreachable-timeout`: the rest gave up (exit 3, not 2).
    /// `endpoints`: each one's last failure, when one is known.
    case unreachable(seconds: Double, endpoints: [UnreachableEndpoint] = [])
    /// The input failed mid-run (with `--no-prescan`), or another error that ends the run.
    case fatal(detail: String)
    /// The result files cannot be written (a full disk, a vanished directory): sending more would
    /// lose track of rows.
    case outputFailed(detail: String)
    /// APNs kept refusing fresh provider tokens as expired: this machine's clock is off.
    /// `ageSeconds` is the refused token's age by this machine's clock.
    case providerTokenRefusedAsExpired(ageSeconds: Int64)

    /// The outcome given to rows that did not finish because of this cause.
    public var outcomeForUnfinishedRows: Outcome {
        if case .unreachable = self { return .gaveUp }
        return .aborted
    }

    /// The `reason` written for rows that did not finish because of this cause.
    public var reasonForUnfinishedRows: String {
        switch self {
        case .credentialsRefused(let reason): reason
        case .wrongEnvironment: LocalReason.wrongEnvironment.rawValue
        case .tlsFailedEverywhere: LocalReason.tlsFailed.rawValue
        case .proxyFailed: LocalReason.proxyFailed.rawValue
        case .cannotResolve: LocalReason.cannotResolve.rawValue
        case .interrupted: LocalReason.interrupted.rawValue
        case .unreachable: LocalReason.unreachable.rawValue
        case .fatal: LocalReason.inputError.rawValue
        case .outputFailed: LocalReason.outputError.rawValue
        case .providerTokenRefusedAsExpired: Reason.expiredProviderToken.name
        }
    }

    /// One line for the user: what happened and what to do.
    public var message: String {
        switch self {
        case .credentialsRefused(let reason):
            "APNs refused the credentials (\(reason)); stopped sending so the list is not burnt. "
                + Self.credentialAdvice(reason)
        case .wrongEnvironment(let answers, .channelNotRegistered):
            "\(answers) answers were ChannelNotRegistered and none was delivered: these look like channels of "
                + "the other APNs environment (a channel is known only in the environment that created it, sandbox "
                + "or production). They are not in dead-channels.csv: check --environment (production or sandbox) "
                + "and --endpoint, then run the same command with --resume to send them again."
        case .wrongEnvironment(let answers, _):
            "\(answers) answers were BadDeviceToken and none was delivered or Unregistered: these look like "
                + "tokens of the other APNs environment (sandbox vs production). They are not in dead-tokens.csv: "
                + "check --environment (production or sandbox) and --endpoint, then run the same command with "
                + "--resume to send them again."
        case .tlsFailedEverywhere(let detail):
            "TLS failed on every endpoint: \(detail)"
        case .proxyFailed(let detail):
            "\(detail); no connection to APNs could be opened through the proxy, so nothing more is sent."
        case .cannotResolve(let names, let reason):
            "cannot resolve \(names.joined(separator: ", ")) (\(reason)): no endpoint's name has an address, so nothing "
                + "could be sent. Check --endpoint (production, sandbox, HOST:PORT or mock) and the machine's DNS setup."
        case .interrupted(let signal):
            "interrupted by signal \(signal); unfinished rows are recorded as aborted."
        case .unreachable(let seconds, let endpoints):
            "every endpoint was unreachable for \(seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)) s (--unreachable-timeout)"
                + (endpoints.isEmpty ? "" : ": " + endpoints.map { "\($0.endpoint) (\($0.cause))" }.joined(separator: ", "))
                + "; the remaining rows gave up with reason Unreachable. Check the network, firewall and --endpoint."
        case .fatal(let detail), .outputFailed(let detail):
            detail
        case .providerTokenRefusedAsExpired(let age):
            "APNs refused the provider token as expired though it is \(age / 60) minutes old by this machine's "
                + "clock (APNs allows 60), and refused its fresh replacements too: check this machine's clock "
                + "(date, NTP); stopped sending so the list is not burnt."
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
