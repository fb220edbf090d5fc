@testable import Cleanup
import Testing

extension PostgresTests {
    /// The batch's join is the token column's own `=`, so the table's btree index on that column
    /// serves it, in the locking SELECT and in the DELETE alike: one index lookup per token variant,
    /// not `lower(token)` computed on every row.
    @Suite struct IndexTests {
        @Test func matchingAndDeletingABatchLookTokensUpInTheTokenIndex() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (id bigserial PRIMARY KEY, token text NOT NULL, topic text NOT NULL,
                                              registered_at timestamptz);
                INSERT INTO \(fixture.table) (token, topic, registered_at)
                  SELECT md5(i::text) || md5((-i)::text), 'com.example.app', '2025-01-01'::timestamptz + i * interval '1 second'
                  FROM generate_series(1, 200000) AS i;
                CREATE INDEX \(fixture.table)_token ON \(fixture.table) (token);
                ANALYZE \(fixture.table);
                """)
            let tokens = try fixture.server.sql("SELECT token FROM \(fixture.table) WHERE id % 2000 = 0").split(separator: "\n")
            let database = try fixture.open()
            let plan = try fixture.plan(database, registeredAt: "registered_at", restrictions: [("topic", "com.example.app")])
            try database.prepareScratch(for: plan)
            try database.begin()
            try database.fillScratch(tokens.map { ScratchEntry(token: String($0), reason: "Unregistered", unregisteredAt: 0) },
                                     for: plan)
            let explained = try database.explain(plan)
            try database.rollback()
            for plan in [explained.matches, explained.apply] {
                #expect(plan.contains("Index Scan using \(fixture.table)_token on \(fixture.table) t"), "\(plan)")
                #expect(!plan.contains("Seq Scan on \(fixture.table)"), "\(plan)")
                #expect(!plan.lowercased().contains("lower("), "\(plan)")
            }
        }
    }
}
