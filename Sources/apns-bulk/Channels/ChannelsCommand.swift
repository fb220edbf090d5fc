import ArgumentParser
import Pipeline

/// `apns-bulk channels`: the broadcast channels of an app (Live Activities, iOS 18) on Apple's
/// channel-management hosts: create, list, show, delete.
struct ChannelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, list, show and delete an app's Live Activity broadcast channels.",
        discussion: """
            A broadcast channel carries one Live Activity update to every device subscribed \
            to it. An app keeps up to 10,000 channels per environment, on Apple's \
            channel-management hosts: api-manage-broadcast.push.apple.com:2196 for \
            production, api-manage-broadcast.sandbox.push.apple.com:2195 for sandbox. Each \
            subcommand takes the app's credential as send does, a signing key or a client \
            certificate, and --environment, --endpoint, --ca-file and --proxy.

            Channel IDs go to stdout, one a line, exactly as APNs gave them; refusals, each \
            with APNs' reason and what it means, go to stderr. A 429 or 5xx is tried again \
            with backoff, up to 5 attempts.

            Exit status:
              0  done: every channel asked for created, listed, shown or deleted
              1  bad flags or files; nothing was sent
              2  APNs refused a request or the credentials, or could not be
                 reached; what was done before is still printed

            --endpoint mock runs an APNs emulator in this process that starts with no \
            channels and ends with the command: to rehearse channels across commands, run \
            apns-bulk mock-server and give its HOST:PORT and --ca-file.
            """,
        subcommands: [ChannelsCreateCommand.self, ChannelsListCommand.self, ChannelsShowCommand.self,
                      ChannelsDeleteCommand.self]
    )
}

extension ChannelsOptions {
    /// Sets up from the flags (exit 1 on a mistake), sends `requests` and hands each final answer
    /// to `onAnswer` as it comes; returns why the run stopped early, if it did. The embedded mock,
    /// with `--endpoint mock`, lives as long as this call.
    func exchange(_ requests: [ManagementRequest], stopAtFirstRefusal: Bool,
                  onAnswer: @escaping @Sendable (Int, ManagementAnswer) -> Void) throws -> ManagementStop? {
        let setup = try ChannelsSetup(self)
        defer { setup.mock?.stop() }
        do {
            try ManagementClient.run(requests, to: setup.target, stopAtFirstRefusal: stopAtFirstRefusal, onAnswer: onAnswer)
        } catch {
            return error
        }
        return nil
    }
}

/// How the channel commands word APNs' answers.
enum ChannelsReport {
    /// "400 ChannelNotRegistered: The channel is not ... ." — the status, APNs' reason and its
    /// meaning from the reasons catalogue (docs/reasons.md).
    static func refusal(status: Int, reason: String?) -> String {
        guard let reason else { return "status \(status), with no reason in the body" }
        guard let meaning = ReasonCatalog.entry(named: reason)?.meaning else { return "\(status) \(reason)" }
        return "\(status) \(reason): \(meaning)"
    }

    /// A final answer that is not a success, in words.
    static func failure(_ answer: ManagementAnswer) -> String? {
        switch answer {
        case .accepted:
            return nil
        case let .refused(status, reason, afterLoss):
            let refusal = "APNs answered " + Self.refusal(status: status, reason: reason)
            return afterLoss ? refusal + " (an earlier attempt was lost with its connection and may have been carried out)"
                : refusal
        case let .unanswered(detail):
            return "no answer from APNs: \(detail)"
        }
    }

    /// `text` without a final period, to go on after it with "; ...".
    static func clause(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}
