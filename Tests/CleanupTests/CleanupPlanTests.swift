import Cleanup
import Foundation
import Testing
import TestSupport

/// The plan's names are checked against the catalog before anything is changed: each refusal is
/// one line naming the flag, and status 1.
@Suite struct CleanupPlanTests {
    static func refusal(_ fixture: SQLiteFixture, table: String = "devices", tokenColumn: String = "token",
                        registeredAt: String? = nil, mark: String? = nil) throws -> CleanupFailure? {
        let request = CleanupRequest(table: table, tokenColumn: tokenColumn, registeredAtColumn: registeredAt,
                                     restrictions: [], markColumn: mark)
        let database = try fixture.database()
        return #expect(throws: CleanupFailure.self) { try request.plan(on: database, system: .sqlite) }
    }

    @Test func anUnknownTableIsNamed() throws {
        let failure = try Self.refusal(SQLiteFixture(""), table: "devicez")
        #expect(failure?.description == "--table devicez: no such table in the database; check the name (and its schema)")
        #expect(failure?.status == 1)
    }

    @Test func anUnknownColumnIsNamedWithItsTable() throws {
        let failure = try Self.refusal(SQLiteFixture(""), registeredAt: "created")
        #expect(failure?.description == "--registered-at-column created: no such column in table devices "
                + "(its columns: id, token, registered_at, topic, environment, dead_at)")
    }

    @Test func aTokenColumnThatIsNotTextIsRefused() throws {
        let failure = try Self.refusal(SQLiteFixture(""), tokenColumn: "id")
        #expect(failure?.description.hasPrefix("--token-column id: the column is INTEGER, not text") == true)
    }

    @Test func aMarkColumnThatIsNeitherTimeNorTextIsRefused() throws {
        let failure = try Self.refusal(SQLiteFixture(""), mark: "id")
        #expect(failure?.description.hasPrefix("--mark id:") == true)
    }

    @Test func anUnknownSchemaIsAnUnknownTable() throws {
        let failure = try Self.refusal(SQLiteFixture(""), table: "app.devices")
        #expect(failure?.description.hasPrefix("--table app.devices: no such table") == true)
    }

    @Test func aMissingFileIsAnErrorNamingItAndIsNotCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("missing.db")
        let url = try DatabaseURL.parse("sqlite:" + path)
        let error = #expect(throws: DatabaseError.self) { try SQLiteDatabase(url: url, password: nil) }
        #expect(error?.description == "sqlite:\(path): no such file; give the path of the app's SQLite database "
                + "(cleanup never creates one)")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAtOpening() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("notes.db", String(repeating: "not a database\n", count: 100))
        let error = #expect(throws: DatabaseError.self) { try SQLiteDatabase(url: try DatabaseURL.parse("sqlite:" + path), password: nil) }
        #expect(error?.description.contains("not a database") == true)
    }

    @Test func sqliteDateAndTimeTypesAreTimestamps() throws {
        let fixture = try SQLiteFixture(schema: "CREATE TABLE devices (token VARCHAR(64), seen DATETIME, born INTEGER, note);", "")
        let table = try #require(try fixture.database().describe(TableName(schema: nil, name: "DEVICES")))
        #expect(table.table.name == "devices")
        #expect(table.columns.map(\.kind) == [.text, .timestamp, .other, .other])
        #expect(table.primaryKey == [])
    }
}
