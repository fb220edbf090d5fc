import ArgumentParser
import Synchronization

/// `apns-bulk channels list`: every channel ID of the app in the environment.
struct ChannelsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Print every channel ID of the app, one a line.",
        usage: "apns-bulk channels list --bundle-id <bundle-id>\n"
            + "       [--key-file <key-file> --key-id <key-id> --team-id <team-id>]\n"
            + "       [--cert-file <cert-file> --cert-key-file <key-file>]\n"
            + "       [--p12-file <p12-file>] [--endpoint <endpoint>] [<options>]",
        discussion: """
            Prints the IDs of the app's channels in the environment, one a line, in \
            APNs' order; nothing when it has none.
            """
    )

    @OptionGroup var options: ChannelsOptions

    func run() throws {
        let answer = try ChannelsReading.one(ChannelManagementAPI.listAll(bundleID: options.bundleID), options: options,
                                             what: "channels list")
        guard let ids = ChannelManagementAPI.channelIDs(inList: answer) else {
            throw RunFailure(message: "channels list: " + ChannelsReading.unreadable(answer, expected: #"{"channels": [...]}"#),
                             status: 2)
        }
        writeStandardOutput(ids.map { $0 + "\n" }.joined())
    }
}

/// `apns-bulk channels show`: one channel's settings.
struct ChannelsShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one channel's settings as a JSON line.",
        usage: "apns-bulk channels show --bundle-id <bundle-id>\n"
            + "       --channel-id <channel-id>\n"
            + "       [--key-file <key-file> --key-id <key-id> --team-id <team-id>]\n"
            + "       [--cert-file <cert-file> --cert-key-file <key-file>]\n"
            + "       [--p12-file <p12-file>] [--endpoint <endpoint>] [<options>]",
        discussion: """
            Prints {"channel_id": ID, "message_storage_policy": 0 or 1, "push_type": \
            "LiveActivity"} on one line, with APNs' values: policy 0 stores no message, 1 \
            the most recent. A channel APNs does not know, deleted or another \
            environment's, is named on stderr with APNs' reason, ChannelNotRegistered, and \
            the exit status is 2.
            """
    )

    @Option(name: .customLong("channel-id"), help: "The channel, as channels create or channels list printed it.")
    var channelID: String
    @OptionGroup var options: ChannelsOptions

    func run() throws {
        if let problem = ChannelManagementAPI.problem(channelID: channelID) { throw RunFailure.usage(problem) }
        let answer = try ChannelsReading.one(ChannelManagementAPI.read(bundleID: options.bundleID, channelID: channelID),
                                             options: options, what: "channels show: channel \(channelID)")
        guard let line = ChannelManagementAPI.showLine(channelID: channelID, body: answer) else {
            throw RunFailure(message: "channels show: " + ChannelsReading.unreadable(
                answer, expected: #"{"message-storage-policy": 0 or 1, "push-type": "LiveActivity"}"#), status: 2)
        }
        writeStandardOutput(line + "\n")
    }
}

/// The one request of `list` and `show`.
enum ChannelsReading {
    /// The body of APNs' success; a refusal or a stop ends the command (exit 2), `what` naming it.
    static func one(_ request: ManagementRequest, options: ChannelsOptions, what: String) throws -> [UInt8] {
        let found = Mutex<ManagementAnswer?>(nil)
        let stop = try options.exchange([request], stopAtFirstRefusal: true) { _, answer in found.withLock { $0 = answer } }
        if let stop { throw RunFailure(message: "\(what): \(stop.message)", status: 2) }
        guard let answer = found.withLock({ $0 }) else {
            throw RunFailure(message: "\(what): no answer from APNs", status: 2)
        }
        if case .accepted(_, _, let body, _) = answer { return body }
        throw RunFailure(message: "\(what): " + ChannelsReport.clause(ChannelsReport.failure(answer) ?? ""), status: 2)
    }

    /// Why an answer's body cannot be read, with its start.
    static func unreadable(_ body: [UInt8], expected: String) -> String {
        if body.count >= ChannelManagementAPI.maxAnswerBytes {
            return "APNs' answer is longer than \(ChannelManagementAPI.maxAnswerBytes >> 20) MiB, past what this command reads"
        }
        let start = String(decoding: body.prefix(200), as: UTF8.self)
        return "APNs' answer is not \(expected): \(start.isEmpty ? "(empty)" : start)"
    }
}
