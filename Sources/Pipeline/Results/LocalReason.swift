/// The reasons apns-bulk itself writes into result records, for rows APNs never answered for
/// good (refused before sending, or not finished). The one place their spelling lives: code
/// writes `LocalReason.x.rawValue`, and `ReasonCatalog` gives each its meaning and the
/// operator's action. A new local reason is a new case here, or the catalog test fails.
public enum LocalReason: String, Sendable, CaseIterable {
    case duplicateToken = "DuplicateToken"
    case fieldTooLarge = "FieldTooLarge"
    case fieldCountMismatch = "FieldCountMismatch"
    case connectionLost = "ConnectionLost"
    case unreachable = "Unreachable"
    case tlsFailed = "TLSFailed"
    case cannotResolve = "CannotResolve"
    case wrongEnvironment = "WrongEnvironment"
    case proxyFailed = "ProxyFailed"
    case interrupted = "Interrupted"
    case inputError = "InputError"
    case outputError = "OutputError"
    case lostInCrash = "LostInCrash"
    case noCredentialsForTopic = "NoCredentialsForTopic"
    case unknownKeyId = "UnknownKeyId"
    case invalidEnvironment = "InvalidEnvironment"

    /// One sentence: what happened to a row with this reason.
    public var meaning: String {
        switch self {
        case .duplicateToken:
            "The same device token with the same topic came earlier in the campaign; that first row (`duplicate_of`) was sent, this one was not."
        case .fieldTooLarge:
            "A field of the row, in any column, is over 64 KiB, so the row was not sent."
        case .fieldCountMismatch:
            "The row has more or fewer fields than the header, usually an unquoted comma, so it was not sent."
        case .connectionLost:
            "The connection carrying the row was lost before APNs answered, on every attempt allowed."
        case .unreachable:
            "Every endpoint stayed unreachable for `--unreachable-timeout`, so the rows not yet sent gave up."
        case .tlsFailed:
            "TLS failed on every endpoint (certificate verification or ALPN), so the run stopped before the row was sent."
        case .cannotResolve:
            "No endpoint's name resolved to an address, so the run stopped before the row was sent."
        case .wrongEnvironment:
            "APNs answered BadDeviceToken (a broadcast: ChannelNotRegistered) and no row of the key and environment was delivered or Unregistered (a broadcast: delivered; 100 such answers stop its rows; fewer at the run's end): the tokens (channels) look like the other APNs environment's, so they are not in dead-tokens.csv (dead-channels.csv)."
        case .proxyFailed:
            "The CONNECT proxy refused or could not be reached on every connection, so the run stopped before the row was sent."
        case .interrupted:
            "The run got SIGINT or SIGTERM before the row was answered."
        case .inputError:
            "The input could not be read on at this row (a stream or `--no-prescan` run), so it and the rows after it were not sent."
        case .outputError:
            "A result file could not be written (a full disk, a vanished directory), so the run stopped before the row was sent."
        case .lostInCrash:
            "The row was sent, but the run was killed (kill -9, OOM, reboot) before it logged the answer, and `--resume --no-resend-lost` did not send it again: APNs may or may not have delivered it."
        case .noCredentialsForTopic:
            "No key or certificate of the run serves the row's topic in the row's environment, so it was not sent (stderr and summary.json's `no_credentials` name the topic and environment)."
        case .unknownKeyId:
            "The row's `key_id` names no key (or certificate) of the run, so it was not sent."
        case .invalidEnvironment:
            "The row's `environment` is not `production`, `sandbox` or `development`, so it was not sent."
        }
    }

    /// One sentence: what the operator does about it.
    public var action: String {
        switch self {
        case .duplicateToken:
            "Nothing to do: pass `--allow-duplicates` only if the campaign really means to notify a device twice."
        case .fieldTooLarge:
            "Fix the row in the CSV (no field over 64 KiB) and send it again."
        case .fieldCountMismatch:
            "Quote the fields that hold commas or quotes in the CSV and send the row again."
        case .connectionLost:
            "Check the network path to APNs, then send the row again (`--resume` does not resend it)."
        case .unreachable:
            "Check the network, firewall and `--endpoint`, then send the `gave_up` rows again as a new campaign (`--resume` does not resend them)."
        case .tlsFailed:
            "Check `--ca-file`, the certificate or key flags, `--endpoint` and any TLS-inspecting middlebox, then `--resume`."
        case .cannotResolve:
            "Check `--endpoint` and the machine's DNS setup, then `--resume`."
        case .wrongEnvironment:
            "Check `--environment` and `--endpoint` (production or sandbox), then run the same command with `--resume`: these rows are sent again."
        case .proxyFailed:
            "Check `--proxy`/`HTTPS_PROXY`, its credentials and its rules for APNs' host and port, then `--resume`."
        case .interrupted:
            "Run `--resume` on the same `--out` to send the rest."
        case .inputError:
            "Fix the input at the line summary.json names (`input_stopped_at_line`) and send the remaining rows."
        case .outputError:
            "Free space or fix the output directory, then run `--resume`."
        case .lostInCrash:
            "Nothing, if a missed notification is better than a repeated one; otherwise send these rows again as a new campaign (no `--resume` sends them)."
        case .noCredentialsForTopic:
            "Add a key or certificate for that topic and environment (`[[keys]]` with its `topics` and `environment`), or fix the row's `topic`/`environment`, and send the rows again."
        case .unknownKeyId:
            "Fix the row's `key_id`, or give that key (`--key-file`, `[[keys]]`), and send the row again."
        case .invalidEnvironment:
            "Fix the row's `environment` (or leave it empty for `--environment`) and send the row again."
        }
    }
}
