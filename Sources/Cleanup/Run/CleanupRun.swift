/// The cleanup itself, written once over `CleanupDatabase`: the list's distinct tokens in batches,
/// each its own transaction (fill the scratch table, judge the matched rows, delete or mark them,
/// check the count, commit), then that batch's audit lines. A kill leaves whole batches behind, and
/// a rerun finishes the job: rows already deleted or marked are not matched or not changed again.
public struct CleanupRun {
    public struct Options: Sendable {
        /// Distinct tokens a batch (a transaction).
        public var batchSize = 1000
        /// Judge everything, change nothing (every batch rolled back).
        public var dryRun = false
        /// Change nothing when more rows than this would be affected.
        public var maxAffected: Int? = nil

        public init(batchSize: Int = 1000, dryRun: Bool = false, maxAffected: Int? = nil) {
            self.batchSize = batchSize
            self.dryRun = dryRun
            self.maxAffected = maxAffected
        }
    }

    let database: any CleanupDatabase
    let plan: CleanupPlan
    let entries: [ScratchEntry]
    let options: Options
    /// Unix milliseconds: what `--mark` sets for a token without an `unregistered_at`.
    let runTime: Int64

    public init(database: any CleanupDatabase, plan: CleanupPlan, entries: [ScratchEntry], options: Options, runTime: Int64) {
        self.database = database
        self.plan = plan
        self.entries = entries
        self.options = options
        self.runTime = runTime
    }

    /// Runs the cleanup. `audit` receives each batch's affected rows once the batch is committed
    /// (in a dry run, once it is judged); `progress` a line for stderr now and then.
    public func run(audit: ([AuditedRow]) throws -> Void = { _ in },
                    progress: (String) -> Void = { _ in }) throws(CleanupFailure) -> CleanupCounts {
        let batches = stride(from: 0, to: entries.count, by: max(1, options.batchSize)).map {
            Array(entries[$0..<min($0 + max(1, options.batchSize), entries.count)])
        }
        do { try database.prepareScratch(for: plan) } catch {
            throw CleanupFailure("preparing the scratch table: \(error.description); nothing was changed", status: 2)
        }
        if let limit = options.maxAffected, !options.dryRun {
            let wouldAffect = try pass(batches, changing: false, audit: { _ in }, progress: progress).affected
            guard wouldAffect <= limit else { throw Self.tooMany(wouldAffect, limit: limit) }
        }
        let counts = try pass(batches, changing: !options.dryRun, audit: audit, progress: progress)
        if let limit = options.maxAffected, counts.affected > limit { throw Self.tooMany(counts.affected, limit: limit) }
        return counts
    }

    static func tooMany(_ count: Int, limit: Int) -> CleanupFailure {
        .usage("--max-affected \(limit): \(count) rows would be affected; nothing was changed. Check the list and the "
               + "flags with --dry-run, or raise --max-affected")
    }

    /// Every batch once: judged, then committed when `changing`, else rolled back.
    private func pass(_ batches: [[ScratchEntry]], changing: Bool, audit: ([AuditedRow]) throws -> Void,
                      progress: (String) -> Void) throws(CleanupFailure) -> CleanupCounts {
        var counts = CleanupCounts()
        counts.dryRun = options.dryRun
        counts.ruleApplied = plan.registeredAtColumn != nil
        if case .mark = plan.action { counts.action = "mark" }
        let action = (changing ? "" : "would-") + counts.action
        var lastProgress = ContinuousClock.now
        for (index, batch) in batches.enumerated() {
            let rows: [MatchedRow]
            do {
                rows = try judge(batch, changing: changing)
            } catch let failure as CleanupFailure {
                throw changing ? midway(failure.description, batch: index, of: batches.count, counts)
                    : CleanupFailure("\(failure.description); nothing was changed", status: 2)
            } catch {
                throw CleanupFailure("\(error)", status: 2)
            }
            counts.add(rows, of: batch)
            counts.batches += 1
            let reasons = Dictionary(batch.map { ($0.token, $0) }, uniquingKeysWith: { first, _ in first })
            let audited = rows.filter { $0.verdict == .affected || $0.verdict == .unjudged }.map {
                AuditedRow(keys: $0.keys, tableToken: $0.tableToken, reason: reasons[$0.listToken]?.reason ?? "",
                           unregisteredAt: reasons[$0.listToken]?.unregisteredAt, action: action)
            }
            if changing || options.dryRun {
                do { try audit(audited) } catch {
                    throw CleanupFailure("writing the audit file: \(error); \(counts.batches) batches (\(counts.affected) "
                                         + "rows affected) were committed, the last one's rows missing from the audit", status: 2)
                }
            }
            if batches.count > 1, ContinuousClock.now - lastProgress > .seconds(1) || index + 1 == batches.count {
                lastProgress = ContinuousClock.now
                progress("cleanup: batch \(index + 1) of \(batches.count) \(changing ? "committed" : "judged"), "
                         + "\(counts.affected) rows \(changing ? "" : "would be ")affected so far")
            }
        }
        return counts
    }

    /// One batch in its transaction; rolled back on any failure, or when not `changing`.
    private func judge(_ batch: [ScratchEntry], changing: Bool) throws -> [MatchedRow] {
        do {
            try database.begin()
        } catch {
            throw CleanupFailure("starting a transaction: \(error.description)", status: 2)
        }
        do {
            try database.fillScratch(batch, for: plan)
            let rows = try database.matches(plan, lockingRows: changing)
            guard changing else {
                try database.rollback()
                return rows
            }
            let expected = rows.filter { $0.verdict == .affected || $0.verdict == .unjudged }.count
            let changed = try database.apply(plan, runTime: runTime)
            guard changed == expected else {
                try? database.rollback()
                throw CleanupFailure("the database changed \(changed) rows where \(expected) were judged; the batch was "
                                     + "rolled back", status: 2)
            }
            try database.commit()
            return rows
        } catch let failure as CleanupFailure {
            throw failure
        } catch {
            try? database.rollback()
            throw CleanupFailure((error as? DatabaseError)?.description ?? "\(error)", status: 2)
        }
    }

    private func midway(_ why: String, batch: Int, of total: Int, _ counts: CleanupCounts) -> CleanupFailure {
        CleanupFailure("batch \(batch + 1) of \(total) failed: \(why). \(counts.batches) batches (\(counts.affected) rows "
                       + "affected) were committed before it; rerun the same command to finish the job", status: 2)
    }
}
