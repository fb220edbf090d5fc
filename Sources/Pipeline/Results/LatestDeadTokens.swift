/// The merge rule of every dead-token list apns-bulk reads or writes (`report`'s merge of shards,
/// `feedback`'s merge into a file, `cleanup`'s list): one line per device token, the one with the
/// latest `unregistered_at` kept. A dated line beats an undated one; on a tie the newer one wins.
/// Tokens stay in order of first appearance.
struct LatestDeadTokens<Line> {
    private var order: [String] = []
    private var kept: [String: (unregisteredAt: Int64?, line: Line)] = [:]

    /// Keeps `line` for `token` when nothing is kept for it yet or `line` is not older. Returns
    /// true when the token was new.
    @discardableResult
    mutating func keep(token: String, unregisteredAt: Int64?, line: Line) -> Bool {
        guard let previous = kept[token] else {
            order.append(token)
            kept[token] = (unregisteredAt, line)
            return true
        }
        if (unregisteredAt ?? Int64.min) >= (previous.unregisteredAt ?? Int64.min) {
            kept[token] = (unregisteredAt, line)
        }
        return false
    }

    /// Distinct tokens.
    var count: Int { order.count }

    /// The kept lines, in order of first appearance.
    var lines: [Line] { order.compactMap { kept[$0]?.line } }
}
