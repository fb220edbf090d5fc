import APNs
import Synchronization

/// The Live Activity channels the mock knows, per app (bundle id), in the one environment it
/// plays: made by create requests, gone for good after delete, at most `limit` per app. Shared by
/// the push listener (broadcasts look channels up) and the management listener, each on its own
/// reactor thread: Sendable, its state behind one lock.
public final class MockChannelStore: Sendable {
    /// Why a channel could not be created.
    enum CreateRefusal: Error { case limitReached }

    private struct App {
        var policies: [String: ChannelStoragePolicy] = [:]
        /// Creation order, for `all-channels` (deleted ids removed).
        var order: [String] = []
    }

    private let apps = Mutex<[String: App]>([:])
    /// Channels of every app, kept under the lock and read without it: a broadcast to a mock with
    /// none (`--admit-any-channel`) skips the look-up, its strings, lock and hashes.
    private let count = Atomic<Int>(0)
    /// Channels per app (`--max-channels`, Apple's 10,000 by default).
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Adds a channel `id` (fresh and random: the caller's) with `policy` to `bundleID`.
    func create(_ id: String, policy: ChannelStoragePolicy, bundleID: String) throws(CreateRefusal) {
        let added = apps.withLock { apps in
            var app = apps[bundleID] ?? App()
            guard app.order.count < limit else { return false }
            app.policies[id] = policy
            app.order.append(id)
            apps[bundleID] = app
            count.add(1, ordering: .releasing)
            return true
        }
        if !added { throw .limitReached }
    }

    /// No app has a channel.
    var isEmpty: Bool { count.load(ordering: .acquiring) == 0 }

    /// The policy of channel `id` of `bundleID`, nil when there is no such channel.
    func policy(of id: some StringProtocol, bundleID: some StringProtocol) -> ChannelStoragePolicy? {
        let id = String(id)
        let bundleID = String(bundleID)
        return apps.withLock { $0[bundleID]?.policies[id] }
    }

    /// Removes channel `id` of `bundleID`; false when there was none.
    func delete(_ id: String, bundleID: String) -> Bool {
        apps.withLock { apps in
            guard apps[bundleID]?.policies.removeValue(forKey: id) != nil else { return false }
            apps[bundleID]?.order.removeAll { $0 == id }
            count.subtract(1, ordering: .releasing)
            return true
        }
    }

    /// The channel ids of `bundleID`, in creation order.
    public func channels(of bundleID: String) -> [String] {
        apps.withLock { $0[bundleID]?.order ?? [] }
    }
}
