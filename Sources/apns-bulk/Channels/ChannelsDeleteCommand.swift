import ArgumentParser
import Synchronization

/// `apns-bulk channels delete`: channels removed for good, each one tried whatever the others' fate.
struct ChannelsDeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete channels; each ID deleted is printed.",
        usage: "apns-bulk channels delete --bundle-id <bundle-id>\n"
            + "       --channel-id <channel-id> ...\n"
            + "       [--key-file <key-file> --key-id <key-id> --team-id <team-id>]\n"
            + "       [--cert-file <cert-file> --cert-key-file <key-file>]\n"
            + "       [--p12-file <p12-file>] [--endpoint <endpoint>] [<options>]",
        discussion: """
            Deletes every channel named, and prints each deleted ID on its own line. A \
            deleted channel is gone for good: its ID never comes back, and devices \
            subscribed to it hear no more. A channel that APNs refuses to delete, such as \
            one it does not know, ChannelNotRegistered, is named on stderr with APNs' \
            reason and its meaning; the others are still deleted, and the exit status is 2.
            """
    )

    @Option(name: .customLong("channel-id"), help: "A channel to delete, as channels create or channels list printed it; repeat for several.")
    var channelIDs: [String] = []
    @OptionGroup var options: ChannelsOptions

    func run() throws {
        guard !channelIDs.isEmpty else {
            throw RunFailure.usage("channels delete needs --channel-id ID: the channels to delete (repeat the flag for several)")
        }
        for id in channelIDs {
            if let problem = ChannelManagementAPI.problem(channelID: id) { throw RunFailure.usage(problem) }
        }
        // Each channel once: a second delete of one would be refused as unknown.
        var seen = Set<String>()
        let ids = channelIDs.filter { seen.insert($0).inserted }
        let requests = ids.map { ChannelManagementAPI.delete(bundleID: options.bundleID, channelID: $0) }
        let tally = Mutex<(deleted: Int, refused: Int)>((0, 0))
        let stop = try options.exchange(requests, stopAtFirstRefusal: false) { index, answer in
            if let failure = ChannelsReport.failure(answer) {
                writeStandardError("channel \(ids[index]): not deleted: \(failure)\n")
                tally.withLock { $0.refused += 1 }
            } else {
                writeStandardOutput(ids[index] + "\n")
                tally.withLock { $0.deleted += 1 }
            }
        }
        let (deleted, refused) = tally.withLock { $0 }
        if let stop {
            throw RunFailure(message: "channels delete: \(ChannelsReport.clause(stop.message)); \(deleted) of \(ids.count) "
                             + "channels deleted, \(ids.count - deleted - refused) not tried", status: 2)
        }
        if refused > 0 {
            throw RunFailure(message: "channels delete: \(deleted) of \(ids.count) channels deleted, \(refused) refused (above)",
                             status: 2)
        }
    }
}
