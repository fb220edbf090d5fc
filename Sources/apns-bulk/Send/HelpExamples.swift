/// Two or three commands at the end of each subcommand's `--help`: what an operator copies and
/// edits first. ArgumentParser prints a command's discussion before its options, so the examples
/// are appended to its help text here, where the last thing read is something to run.
enum HelpExamples {
    /// By subcommand name; the root command's help (`apns-bulk --help`) uses "".
    static let byCommand: [String: [(comment: String, command: String)]] = [
        "": [
            ("Rehearse a campaign against the embedded mock APNs (no Apple account):",
             "apns-bulk send --input campaign.csv --topic com.example.app --endpoint mock"),
            ("Send it to production with token auth:",
             "apns-bulk send --input campaign.csv --topic com.example.app --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("Count the outcomes of a finished run:",
             "apns-bulk report apns-bulk-out/*/results.jsonl.zst"),
        ],
        "send": [
            ("Token auth, production, 8 connections; results in out/nightly:",
             "apns-bulk send --input campaign.csv.zst --topic com.example.app --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 --connections 8 --out out/nightly"),
            ("The same after a crash or kill: skip the rows recorded, send the rest:",
             "apns-bulk send --config nightly.toml --out out/nightly --resume"),
            ("A rehearsal against the embedded mock with a GOAWAY every 5,000 requests:",
             "apns-bulk send --input campaign.csv --topic com.example.app --endpoint mock --mock-option goaway-after=5000"),
        ],
        "mock-server": [
            ("A mock that checks one key's tokens and serves one app; its CA in ca.pem:",
             "apns-bulk mock-server --listen 127.0.0.1:8443 --ca-out ca.pem --verify-key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 --topic com.example.app"),
            ("A sandbox mock checking several keys, listed as [[keys]] in send's job file:",
             "apns-bulk mock-server --listen 127.0.0.1:8444 --ca-out ca.pem --keys-file many-apps.toml --environment sandbox"),
            ("A bad night: 1 % server errors, 429s and a GOAWAY every 10,000 requests:",
             "apns-bulk mock-server --listen 127.0.0.1:8443 --ca-out ca.pem --fail 500:0.01 --too-many-requests 0.01 --goaway-after 10000"),
        ],
        "report": [
            ("Totals of one run:",
             "apns-bulk report out/nightly/results.jsonl.zst"),
            ("Several shards' logs as one campaign, and their merged dead tokens:",
             "apns-bulk report out/shard-*/results.jsonl.zst --dead-tokens dead.csv --json"),
            ("Two runs on one HTML page, with the change in rate and latency:",
             "apns-bulk report --html before-after.html --compare out/before out/after"),
        ],
        "token": [
            ("A provider token for a curl test; it is a credential for an hour:",
             "apns-bulk token --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("A token issued at a given time, to test how a server judges its age:",
             "apns-bulk token --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 --issued-at 1767225600"),
        ],
        "feedback": [
            ("The retired feedback service's dead tokens, merged into last night's list:",
             "apns-bulk feedback --endpoint production --cert-file push.pem --cert-key-file push.key --out dead-tokens.csv"),
            ("From an in-house relay that still serves it, with a .p12:",
             "apns-bulk feedback --endpoint relay.internal:2196 --p12-file push.p12 --p12-password-env P12_PASSWORD --out dead.csv"),
        ],
        "cleanup": [
            ("What last night's list would delete by Apple's rule, changing nothing:",
             "apns-bulk cleanup --dead-tokens dead-tokens.csv --database sqlite:app.db --table devices --token-column token --registered-at-column updated_at --dry-run"),
            ("PostgreSQL, the password in a Secret file, at most 5,000 rows, audited:",
             "apns-bulk cleanup --dead-tokens dead-tokens.csv --database postgresql://app@db.internal/app --password-file /run/secrets/db-password --table app.devices --token-column token --registered-at-column registered_at --max-affected 5000 --audit-out cleanup-audit.csv"),
            ("Mark rows instead of deleting them, for one app and environment:",
             "apns-bulk cleanup --dead-tokens dead.csv --database mysql://app@127.0.0.1/app --password-env DB_PASSWORD --table devices --token-column token --mark unregistered_at --topic-column bundle_id --topic com.example.app --environment-column env --environment production"),
        ],
        "channels": [
            ("Ten channels that keep their latest message, for the app in production:",
             "apns-bulk channels create --bundle-id com.example.app --count 10 --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("Every channel of the app in sandbox, with the app's certificate:",
             "apns-bulk channels list --bundle-id com.example.app --environment sandbox --cert-file push.pem --cert-key-file push.key"),
            ("A rehearsal against a mock-server started beforehand (its CA in ca.pem):",
             "apns-bulk channels create --bundle-id com.example.app --endpoint 127.0.0.1:8443 --ca-file ca.pem --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
        ],
        "channels create": [
            ("Ten channels that keep their latest message, their IDs into a file:",
             "apns-bulk channels create --bundle-id com.example.app --count 10 --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 > channels.txt"),
            ("One channel that stores nothing, in sandbox, with the app's certificate:",
             "apns-bulk channels create --bundle-id com.example.app --storage-policy no-storage --environment sandbox --cert-file push.pem --cert-key-file push.key"),
        ],
        "channels list": [
            ("Every channel of the app in production:",
             "apns-bulk channels list --bundle-id com.example.app --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("Those of a mock-server started beforehand (its CA in ca.pem):",
             "apns-bulk channels list --bundle-id com.example.app --endpoint 127.0.0.1:8443 --ca-file ca.pem --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
        ],
        "channels show": [
            ("One channel's storage policy and push type:",
             "apns-bulk channels show --bundle-id com.example.app --channel-id dHN0LXNyY2gtY2hubA== --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("The same in sandbox, through the company's proxy:",
             "apns-bulk channels show --bundle-id com.example.app --channel-id dHN0LXNyY2gtY2hubA== --environment sandbox --proxy http://proxy.internal:3128 --p12-file push.p12"),
        ],
        "channels delete": [
            ("Two channels whose matches are over:",
             "apns-bulk channels delete --bundle-id com.example.app --channel-id dHN0LXNyY2gtY2hubA== --channel-id c2Vjb25kLWNoYW5uZWw= --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456"),
            ("One in sandbox, with the app's .p12 (its password in P12_PASSWORD):",
             "apns-bulk channels delete --bundle-id com.example.app --channel-id dHN0LXNyY2gtY2hubA== --environment sandbox --p12-file push.p12 --p12-password-env P12_PASSWORD"),
        ],
        "broadcast": [
            ("Score updates to the app's channels in production; results in out/match:",
             "apns-bulk broadcast --input updates.csv --bundle-id com.example.app --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 --out out/match"),
            ("The same after a crash or kill: skip the rows recorded, send the rest:",
             "apns-bulk broadcast --input updates.csv --bundle-id com.example.app --key-file AuthKey_ABCDE12345.p8 --key-id ABCDE12345 --team-id TEAM123456 --out out/match --resume"),
            ("A rehearsal against the embedded mock, which takes any channel ID:",
             "apns-bulk broadcast --input updates.csv --bundle-id com.example.app --endpoint mock --out out/rehearsal"),
        ],
        "gen": [
            ("A million rows, zstd-compressed, for a benchmark:",
             "apns-bulk gen --rows 1000000 --out campaign.csv.zst"),
            ("With bad rows and dead tokens, listed for the mock's --unregistered-file:",
             "apns-bulk gen --rows 100000 --out night.csv --invalid-rate 0.01 --unregistered-rate 0.02 --unregistered-out unregistered.txt"),
        ],
    ]

    /// `help` (ArgumentParser's text for one command) with its examples appended, or unchanged
    /// when it is not a help text. The command is found on help's `USAGE: apns-bulk NAME` line
    /// (`NAME SUBNAME` for a subcommand's own, such as `channels create`).
    static func appended(to help: String) -> String {
        guard let usage = help.split(separator: "\n").first(where: { $0.hasPrefix("USAGE: apns-bulk") }) else { return help }
        let words = usage.split(separator: " ")
        let names = words.dropFirst(2).prefix { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("-") }.prefix(2)
        let name = names.count == 2 && byCommand[names.joined(separator: " ")] != nil ? names.joined(separator: " ")
            : names.first.map(String.init) ?? ""
        guard let examples = byCommand[name] else { return help }
        var text = help.hasSuffix("\n") ? help : help + "\n"
        text += "\nEXAMPLES:\n"
        for example in examples {
            text += "  # \(example.comment)\n" + wrapped(example.command)
        }
        return text
    }

    /// A shell command in lines of at most 80 columns, continued with a backslash and indented
    /// further, so that it can be pasted as it stands.
    static func wrapped(_ command: String) -> String {
        var lines: [String] = []
        var line = "  "
        for word in flagsWithTheirValues(command) {
            let candidate = line.hasSuffix(" ") ? line + word : line + " " + word
            if candidate.count > 78, line.count > 8 {
                lines.append(line + " \\")
                line = "      " + word
            } else {
                line = candidate
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The command's words, each flag joined to its value: a line never ends between the two.
    private static func flagsWithTheirValues(_ command: String) -> [String] {
        var units: [String] = []
        for word in command.split(separator: " ").map(String.init) {
            if let last = units.last, last.hasPrefix("--"), !last.contains(" "), !word.hasPrefix("-") {
                units[units.count - 1] = last + " " + word
            } else {
                units.append(word)
            }
        }
        return units
    }
}
