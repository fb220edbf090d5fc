import Cleanup
import Testing
import TestSupport

/// A SQLite database that fails on purpose: in a given batch, or by reporting a wrong count.
final class FaultyDatabase: CleanupDatabase {
    let inner: SQLiteDatabase
    /// The batch (counted from 1) whose scratch fill fails; nil for none.
    let failingBatch: Int?
    /// Added to what `apply` returns.
    let countSkew: Int
    private var batches = 0

    init(_ inner: SQLiteDatabase, failingBatch: Int? = nil, countSkew: Int = 0) {
        self.inner = inner
        self.failingBatch = failingBatch
        self.countSkew = countSkew
    }

    var product: String { inner.product }
    func describe(_ table: TableName) throws(DatabaseError) -> TableDescription? { try inner.describe(table) }
    func prepareScratch(for plan: CleanupPlan) throws(DatabaseError) { try inner.prepareScratch(for: plan) }
    func begin() throws(DatabaseError) { try inner.begin() }
    func commit() throws(DatabaseError) { try inner.commit() }
    func rollback() throws(DatabaseError) { try inner.rollback() }
    func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError) {
        batches += 1
        if batches == failingBatch { throw DatabaseError(.statement, "connection lost") }
        try inner.fillScratch(entries, for: plan)
    }
    func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow] {
        try inner.matches(plan, lockingRows: lockingRows)
    }
    func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int {
        try inner.apply(plan, runTime: runTime) + countSkew
    }
}

@Suite struct CleanupRunFailureTests {
    static let rows = "INSERT INTO devices (id, token) VALUES (1, 'aa01'), (2, 'aa02'), (3, 'aa03'), (4, 'aa04'), (5, 'aa05');"
    static let entries = (1...5).map { dead("aa0\($0)") }

    static func run(_ database: any CleanupDatabase, batchSize: Int) throws -> CleanupCounts {
        let request = CleanupRequest(table: "devices", tokenColumn: "token", registeredAtColumn: nil, restrictions: [], markColumn: nil)
        let plan = try request.plan(on: database, system: .sqlite)
        return try CleanupRun(database: database, plan: plan, entries: entries, options: .init(batchSize: batchSize),
                              runTime: 0).run()
    }

    @Test func aFailureMidwaySaysWhatWasCommittedAndARerunFinishesTheJob() throws {
        let fixture = try SQLiteFixture(Self.rows)
        let failure = #expect(throws: CleanupFailure.self) {
            try Self.run(FaultyDatabase(fixture.database(), failingBatch: 3), batchSize: 2)
        }
        #expect(failure?.status == 2)
        #expect(failure?.description.hasPrefix("batch 3 of 3 failed: connection lost. 2 batches (4 rows affected) were "
                                               + "committed before it; rerun the same command to finish the job") == true)
        #expect(try fixture.ids() == [5])
        let rerun = try Self.run(fixture.database(), batchSize: 2)
        #expect(rerun.affected == 1)
        #expect(try fixture.ids() == [])
    }

    @Test func aChangeCountThatDiffersFromTheJudgedRowsRollsTheBatchBack() throws {
        let fixture = try SQLiteFixture(Self.rows)
        let failure = #expect(throws: CleanupFailure.self) {
            try Self.run(FaultyDatabase(fixture.database(), countSkew: 1), batchSize: 5)
        }
        #expect(failure?.status == 2)
        #expect(failure?.description.contains("the database changed 6 rows where 5 were judged; the batch was rolled back") == true)
        #expect(try fixture.ids() == [1, 2, 3, 4, 5])
    }
}
