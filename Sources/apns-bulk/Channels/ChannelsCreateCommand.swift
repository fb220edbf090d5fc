import ArgumentParser
import Synchronization

/// `apns-bulk channels create`: new channels for the app, each ID printed as APNs gives it.
struct ChannelsCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create broadcast channels and print each new channel ID.",
        // ArgumentParser prints a usage line unwrapped: these fit 80 columns.
        usage: "apns-bulk channels create --bundle-id <bundle-id>\n"
            + "       [--storage-policy <policy>] [--count <count>]\n"
            + "       [--key-file <key-file> --key-id <key-id> --team-id <team-id>]\n"
            + "       [--cert-file <cert-file> --cert-key-file <key-file>]\n"
            + "       [--p12-file <p12-file>] [--endpoint <endpoint>] [<options>]",
        discussion: """
            Prints each new channel's ID on its own line, as APNs returned it, as soon as \
            it is made. The storage policy is fixed for the channel's life: no-storage \
            keeps no message, for a higher publishing budget, and every broadcast to it \
            needs expiration 0; most-recent keeps the latest message for up to 8 hours.

            A refusal, such as 400 CannotCreateChannelConfig once the app has 10,000 \
            channels, stops the command: APNs' reason and its meaning go to stderr, the \
            IDs made before it stay printed, and the exit status is 2.
            """
    )

    @Option(name: .customLong("storage-policy"), help: "no-storage or most-recent: what APNs keeps of each channel's messages.")
    var storagePolicy: ChannelManagementAPI.StoragePolicy = .mostRecent
    @Option(help: "How many channels to create, at most 10,000.")
    var count = 1
    @OptionGroup var options: ChannelsOptions

    func run() throws {
        let limit = ChannelManagementAPI.channelLimit
        guard (1...limit).contains(count) else {
            throw RunFailure.usage("--count \(count): give 1 to \(limit); APNs keeps at most \(limit) channels per app and environment")
        }
        let request = ChannelManagementAPI.create(bundleID: options.bundleID, policy: storagePolicy)
        let tally = Mutex<(created: Int, resentAfterLoss: Int, problem: String?)>((0, 0, nil))
        let stop = try options.exchange(Array(repeating: request, count: count), stopAtFirstRefusal: true) { _, answer in
            switch answer {
            case .accepted(_, let channelID?, _, let afterLoss) where !channelID.isEmpty:
                writeStandardOutput(channelID + "\n")
                tally.withLock {
                    $0.created += 1
                    if afterLoss { $0.resentAfterLoss += 1 }
                }
            case .accepted(let status, _, _, _):
                tally.withLock {
                    $0.problem = $0.problem ?? "APNs answered \(status) without an apns-channel-id header, so a channel may "
                        + "have been made whose ID is unknown; see channels list"
                }
            default:
                let failure = ChannelsReport.failure(answer) ?? ""
                tally.withLock { $0.problem = $0.problem ?? ChannelsReport.clause(failure) }
            }
        }
        let (created, resentAfterLoss, problem) = tally.withLock { $0 }
        if resentAfterLoss > 0 {
            // A create is not idempotent: the lost attempt may have made a channel whose ID never came back.
            writeStandardError("warning: \(resentAfterLoss) create requests were lost with their connection and sent again; "
                               + "each lost one may have made a channel whose ID was never printed: compare channels list\n")
        }
        guard let why = stop?.message ?? problem else { return }
        throw RunFailure(message: "channels create: \(ChannelsReport.clause(why)); \(created) of \(count) channels created"
                         + (created > 0 ? " (their IDs are on stdout)" : ""), status: 2)
    }
}
