import APNs
import ArgumentParser
import Foundation
import Transport

/// Apple's channel-management API for Live Activity broadcasts (iOS 18), as docs/apns.md has it:
/// its hosts, the four requests and what their answers hold. Values only; `ManagementClient`
/// sends them.
enum ChannelManagementAPI {
    /// Apple's management host of `environment` (APNs' `BroadcastEndpoints`).
    static func host(_ environment: APNsEnvironment) -> Endpoint {
        let (host, port) = BroadcastEndpoints.managementHost(environment)
        return Endpoint(host: host, port: port)
    }

    /// The header that names a channel: APNs' answer to a create, and the request's on read and delete.
    static let channelIDHeader = BroadcastRules.channelIDHeader
    /// At most this many channels per app and environment (then 400 CannotCreateChannelConfig).
    static let channelLimit = BroadcastRules.maxChannelsPerApp
    /// An answer is kept up to this size: a list of every channel of an app is the longest.
    static let maxAnswerBytes = 4 << 20

    /// `--storage-policy`: what APNs keeps of a channel's messages, fixed when the channel is made.
    /// Not CaseIterable: --help would list the values in a parenthesis of its own, the help text names them.
    enum StoragePolicy: String, ExpressibleByArgument, Sendable {
        /// No message stored (policy 0): a higher publishing budget; every broadcast needs expiration 0.
        case noStorage = "no-storage"
        /// The most recent message stored, for up to 8 hours (policy 1).
        case mostRecent = "most-recent"

        var policy: ChannelStoragePolicy { self == .noStorage ? .noMessageStored : .mostRecentMessageStored }
    }

    static func create(bundleID: String, policy: StoragePolicy) -> ManagementRequest {
        ManagementRequest(method: "POST", path: BroadcastEndpoints.channelsPath(bundleID: bundleID), headers: [],
                          body: Array(policy.policy.channelJSON.utf8))
    }

    static func read(bundleID: String, channelID: String) -> ManagementRequest {
        ManagementRequest(method: "GET", path: BroadcastEndpoints.channelsPath(bundleID: bundleID),
                          headers: [H2Header(channelIDHeader, channelID)], body: [])
    }

    static func delete(bundleID: String, channelID: String) -> ManagementRequest {
        ManagementRequest(method: "DELETE", path: BroadcastEndpoints.channelsPath(bundleID: bundleID),
                          headers: [H2Header(channelIDHeader, channelID)], body: [])
    }

    static func listAll(bundleID: String) -> ManagementRequest {
        ManagementRequest(method: "GET", path: BroadcastEndpoints.allChannelsPath(bundleID: bundleID), headers: [], body: [])
    }

    // MARK: Answers

    /// The channel IDs of a list answer, `{"channels": [...]}`, in APNs' order; nil when the body
    /// is not that.
    static func channelIDs(inList body: [UInt8]) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let channels = object["channels"] as? [Any] else { return nil }
        let ids = channels.compactMap { $0 as? String }
        return ids.count == channels.count ? ids : nil
    }

    /// `show`'s line for a read answer, `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`:
    /// `{"channel_id":ID,"message_storage_policy":0|1,"push_type":"LiveActivity"}` with APNs' values;
    /// nil when the body is not that.
    static func showLine(channelID: String, body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let policy = object["message-storage-policy"] as? Int, ChannelStoragePolicy(rawValue: policy) != nil,
              let pushType = object["push-type"] as? String else { return nil }
        // The keys sort in the order the line has them; a base64 ID keeps its '/' unescaped.
        let line: [String: Any] = ["channel_id": channelID, "message_storage_policy": policy, "push_type": pushType]
        guard let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Local checks

    /// What is wrong with `bundleID` as the app of a channel request, nil when nothing: it goes
    /// into the request's path, so only a bundle ID's characters (letters, digits, '.', '-').
    static func problem(bundleID: String) -> String? {
        if bundleID.isEmpty { return "--bundle-id is empty; give the app's bundle ID, e.g. com.example.app" }
        if BroadcastRules.hasPushTypeSuffix(bundleID) {
            return "--bundle-id \(bundleID): give the app's bundle ID without its push type's suffix "
                + "(channels belong to the app; APNs would answer TopicDisallowed)"
        }
        guard bundleID.utf8.allSatisfy({ isASCIIAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }) else {
            return "--bundle-id \(bundleID): a bundle ID holds only letters, digits, '.' and '-'; give the app's, e.g. com.example.app"
        }
        return nil
    }

    /// What is wrong with `channelID` as a channel ID, nil when nothing: APNs' IDs are base64
    /// text (APNs' `BroadcastRules`), given back exactly as `channels create` or `channels list` printed them.
    static func problem(channelID: String) -> String? {
        if channelID.isEmpty { return "--channel-id is empty; give a channel ID as channels create or channels list printed it" }
        guard BroadcastRules.isWellFormedChannelID(channelID) else {
            return "--channel-id \(channelID): not a channel ID, which is base64 text (letters, digits, '+' and '/', "
                + "padded with '=' to a multiple of 4); give it exactly as channels create or channels list printed it"
        }
        return nil
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }
}
