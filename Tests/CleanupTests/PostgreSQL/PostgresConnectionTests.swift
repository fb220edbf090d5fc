import Cleanup
import Foundation
import TestSupport
import Testing

extension PostgresTests {
    /// A connection that fails says so in one line that names the URL without its password.
    @Suite struct ConnectionTests {
        func connectionError(_ url: DatabaseURL) throws -> DatabaseError {
            try #require(#expect(throws: DatabaseError.self) { _ = try PostgresDatabase(url: url, password: nil) })
        }

        func expectOneLine(_ error: DatabaseError, naming url: DatabaseURL, saying reason: String, secrets: [String]) {
            #expect(error.kind == .connection)
            #expect(error.description.contains(url.redacted))
            #expect(error.description.contains(reason), "\(error.description)")
            #expect(!error.description.contains("\n"))
            for secret in secrets { #expect(!error.description.contains(secret)) }
        }

        @Test func aWrongPasswordIsOneLineWithoutThePassword() throws {
            let fixture = try PostgresFixture()
            let url = fixture.url(password: "wrong-horse-battery")
            expectOneLine(try connectionError(url), naming: url, saying: "password authentication failed",
                          secrets: ["wrong-horse-battery", fixture.server.password])
        }

        @Test func anUnreachableServerIsOneLine() throws {
            let fixture = try PostgresFixture()
            let url = fixture.url(port: try LoopbackPort.free())
            expectOneLine(try connectionError(url), naming: url, saying: "Connection refused", secrets: [fixture.server.password])
        }

        @Test func sslRequiredAgainstAServerWithoutSSLIsRefused() throws {
            let fixture = try PostgresFixture()
            let url = fixture.url(parameters: [("sslmode", "require")])
            expectOneLine(try connectionError(url), naming: url, saying: "server does not support SSL, but SSL was required",
                          secrets: [fixture.server.password])
        }

        @Test func theSessionNamesItselfAndReportsTheServersVersion() throws {
            let fixture = try PostgresFixture()
            let database = try fixture.open()
            #expect(database.product.hasPrefix("PostgreSQL 1"))
            let names = try fixture.server.sql("SELECT application_name FROM pg_stat_activity WHERE application_name = 'apns-bulk'")
            #expect(names.contains("apns-bulk"))
        }

        @Test func aFailedStatementIsOneLineNamingWhatItDid() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("CREATE TABLE \(fixture.table) (token text PRIMARY KEY, topic int)")
            let database = try fixture.open()
            let plan = try fixture.plan(database, restrictions: [("topic", "com.example.app")])
            try database.prepareScratch(for: plan)
            try database.begin()
            try database.fillScratch([ScratchEntry(token: hexToken(1), reason: "Unregistered", unregisteredAt: nil)], for: plan)
            let error = #expect(throws: DatabaseError.self) { try database.matches(plan, lockingRows: false) }
            #expect(error?.kind == .statement)
            #expect(error?.description.contains("finding the batch's rows in \(fixture.table)") == true)
            #expect(error?.description.contains("invalid input syntax for type integer") == true)
            #expect(error?.description.contains("\n") == false)
            try database.rollback()
        }
    }
}
