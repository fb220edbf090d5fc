/// How `--connections` is shared by the credential groups and dealt to the reactor threads.
/// `--connections` stays the total: every group with rows gets one connection, and the rest go by
/// the groups' shares of the rows (largest remainders first); a group without rows gets none.
/// When there are more groups with rows than connections, each still gets one (a key with rows is
/// never left without a connection). Without a row count (a stream, `--no-prescan`) every group
/// gets an equal share, at least one, and opens it only at its first row.
enum ConnectionPlan {
    /// Connections per group.
    static func shares(total: Int, rows: [Int]) -> [Int] {
        let busy = rows.indices.filter { rows[$0] > 0 }
        var shares = rows.map { $0 > 0 ? 1 : 0 }
        let rest = total - busy.count
        let sum = busy.reduce(0) { $0 + rows[$1] }
        guard rest > 0, sum > 0 else { return shares }
        var given = 0
        var remainders: [(Int, Int)] = []
        for group in busy {
            let exact = rest * rows[group]
            shares[group] += exact / sum
            given += exact / sum
            remainders.append((exact % sum, group))
        }
        for (_, group) in remainders.sorted(by: { $0.0 != $1.0 ? $0.0 > $1.0 : $0.1 < $1.1 }).prefix(rest - given) {
            shares[group] += 1
        }
        return shares
    }

    /// Without row counts: `total` split evenly over `groups`, at least one each.
    static func evenShares(total: Int, groups: Int) -> [Int] {
        (0..<groups).map { max(1, total / groups + ($0 < total % groups ? 1 : 0)) }
    }

    /// Per reactor thread, each group's slots there. Connection c (counted over all groups) goes to
    /// thread c mod `threads`; within a group, its j-th connection to its endpoint j mod E and
    /// that endpoint's (j div E)-th address. One group is exactly `ConnectionPool.assignments`.
    static func assignments(groups: [CredentialGroup], shares: [Int], threads: Int) -> [[(group: Int, slots: [ConnectionSlot])]] {
        var perThread = Array(repeating: [(group: Int, slots: [ConnectionSlot])](), count: threads)
        var next = 0
        for group in groups where shares[group.index] > 0 {
            var slots = Array(repeating: [ConnectionSlot](), count: threads)
            let endpoints = group.endpointIndices
            for j in 0..<shares[group.index] {
                slots[next % threads].append(ConnectionSlot(id: next, endpointIndex: endpoints[j % endpoints.count],
                                                            addressIndex: j / endpoints.count))
                next += 1
            }
            for thread in 0..<threads where !slots[thread].isEmpty {
                perThread[thread].append((group.index, slots[thread]))
            }
        }
        return perThread
    }
}
