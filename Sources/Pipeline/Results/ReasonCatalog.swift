import APNs

/// Every reason a result record can carry — APNs' (`Reason`), apns-bulk's own (`LocalReason`,
/// and `InvalidPayload`, which APNs never sends) and the binary provider API's status names
/// (`LegacyStatus`) — with what it means and what the operator does about it. One table, so that
/// docs/reasons.md, `report`'s pages and the code cannot drift apart: that page's table is generated
/// from `markdownTable` and tested against it. A name may appear under two kinds (`Shutdown`,
/// `MissingTopic`, `MissingDeviceToken` are also binary status names); `entry(named:protocol:)`
/// picks by the protocol the run used.
public enum ReasonCatalog {
    /// Where a reason comes from.
    public enum Kind: String, Sendable, CaseIterable {
        /// APNs' HTTP/2 answer (docs/apns.md).
        case apple
        /// apns-bulk's own, for a row APNs never answered for good.
        case local
        /// The binary provider API's error-response status (`--protocol binary`).
        case legacyBinary = "legacy-binary"
    }

    /// One reason: its name as records spell it, and one sentence each of meaning and action.
    public struct Entry: Sendable, Equatable {
        public let name: String
        public let kind: Kind
        public let meaning: String
        public let action: String
    }

    /// Apple's reasons first, then the local ones, then the binary status names; each group in
    /// its type's declaration order.
    public static let entries: [Entry] =
        Reason.allCases.map { reason in
            let text = apple(reason)
            return Entry(name: reason.name, kind: reason.isAPNsReason ? .apple : .local,
                         meaning: text.meaning, action: text.action)
        }
        + LocalReason.allCases.map {
            Entry(name: $0.rawValue, kind: .local, meaning: $0.meaning, action: $0.action)
        }
        + LegacyStatus.allCases.map { status in
            let text = legacy(status)
            return Entry(name: status.reasonName, kind: .legacyBinary, meaning: text.meaning, action: text.action)
        }

    /// Every distinct name a record's `reason` can hold.
    public static let names: Set<String> = Set(entries.map(\.name))

    /// Every entry spelled `name` (two for a name both APNs and the binary API use). APNs'
    /// other spelling "BadEnvironmentKeyInToken", which a record keeps as APNs sent it, finds
    /// the entry of the reason `Reason(name:)` reads it as.
    public static func entries(named name: String) -> [Entry] {
        let found = entries.filter { $0.name == name }
        guard found.isEmpty, let reason = Reason(name: name), reason.name != name else { return found }
        return entries(named: reason.name)
    }

    /// The entry for a record's reason: the binary API's when the run used it (`binary: true`)
    /// and it has one, else the first. Nil for a reason no one catalogued (APNs may add some).
    public static func entry(named name: String, binary: Bool = false) -> Entry? {
        let found = entries(named: name)
        return found.first { binary == ($0.kind == .legacyBinary) } ?? found.first
    }

    /// docs/reasons.md's table, exactly as that page holds it between its markers.
    public static var markdownTable: String {
        var lines = ["| Reason | Kind | What it means | What to do |", "|---|---|---|---|"]
        for entry in entries {
            lines.append("| `\(entry.name)` | \(entry.kind.rawValue) | \(entry.meaning) | \(entry.action) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
