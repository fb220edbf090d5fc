import Cleanup
import Foundation
import Testing
import TestSupport

@Suite struct DatabaseURLTests {
    @Test func aPostgresURLIsReadIntoItsPartsPercentDecoded() throws {
        let url = try DatabaseURL.parse("postgresql://app%40ops:p%3Ass@db.internal:6432/app%20db?sslmode=require&application_name=x")
        #expect(url.system == .postgresql)
        #expect(url.user == "app@ops")
        #expect(url.password == "p:ss")
        #expect(url.host == "db.internal")
        #expect(url.port == 6432)
        #expect(url.database == "app db")
        #expect(url.parameters.map(\.name) == ["sslmode", "application_name"])
        #expect(url.parameters.map(\.value) == ["require", "x"])
        #expect(url.redacted == "postgresql://app%40ops:***@db.internal:6432/app%20db?sslmode=require&application_name=x")
    }

    @Test func eachSchemeSpellingNamesItsSystem() throws {
        #expect(try DatabaseURL.parse("postgres://u@h/d").system == .postgresql)
        #expect(try DatabaseURL.parse("mysql://u@h/d").system == .mysql)
        #expect(try DatabaseURL.parse("mariadb://u:pw@[::1]:3307/d").port == 3307)
        #expect(try DatabaseURL.parse("mariadb://u:pw@[::1]:3307/d").host == "::1")
        #expect(try DatabaseURL.parse("mysql://h/d").user == nil)
    }

    @Test func sqliteTakesARelativeOrAbsolutePath() throws {
        #expect(try DatabaseURL.parse("sqlite:app.db").database == "app.db")
        #expect(try DatabaseURL.parse("sqlite:/var/lib/app.db").database == "/var/lib/app.db")
        #expect(try DatabaseURL.parse("sqlite:///var/lib/app%20x.db").database == "/var/lib/app x.db")
        #expect(try DatabaseURL.parse("sqlite:app.db").system == .sqlite)
    }

    @Test(arguments: [
        ("ftp://u@h/d", "unknown scheme ftp"),
        ("postgresql://u@h:0/d", "the port must be a number from 1 to 65535"),
        ("postgresql://u@h:65536/d", "the port must be a number from 1 to 65535"),
        ("postgresql://u@h/", "no database name"),
        ("mysql:h/d", "the scheme must be followed by //"),
        ("sqlite:", "no file path"),
        ("sqlite://host/file.db", "sqlite:// takes no host"),
        ("devices.db", "no scheme"),
        ("mysql://u@h/app%zz", "a bad %-escape in the database name"),
    ])
    func aBadURLIsOneLineNamingTheFlagAndTheForms(text: String, why: String) {
        let error = #expect(throws: DatabaseURL.ParseError.self) { try DatabaseURL.parse(text) }
        #expect(error?.description.hasPrefix("--database \(text): \(why)") == true, "\(String(describing: error))")
        #expect(error?.description.hasSuffix("give postgresql://user[:password]@host[:port]/db, "
                                             + "mysql://user[:password]@host[:port]/db or sqlite:PATH (sqlite:///abs/path)") == true)
    }

    @Test func aBadURLNeverShowsItsPassword() {
        let error = #expect(throws: DatabaseURL.ParseError.self) { try DatabaseURL.parse("postgresql://app:s3cr%2Fet@h:99999/d") }
        #expect(error?.description.contains("s3cr") == false)
        #expect(error?.description.contains("postgresql://app:***@h:99999/d") == true)
    }
}

@Suite struct DatabasePasswordTests {
    static let url = try! DatabaseURL.parse("postgresql://app@h/d")

    @Test func theFirstLineOfAPasswordFileIsThePassword() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("password", "s3cret\r\nsecond line\n")
        #expect(try DatabasePassword.resolve(url: Self.url, environmentVariable: nil, file: file) == "s3cret")
    }

    @Test func anEnvironmentVariableNamesThePassword() throws {
        #expect(try DatabasePassword.resolve(url: Self.url, environmentVariable: "DB_PW", file: nil,
                                             environment: ["DB_PW": "s3cret"]) == "s3cret")
        let error = #expect(throws: DatabasePassword.Problem.self) {
            try DatabasePassword.resolve(url: Self.url, environmentVariable: "DB_PW", file: nil, environment: [:])
        }
        #expect(error?.description == "--password-env DB_PW: that environment variable is not set; set it to the database password")
    }

    @Test func aPasswordGivenTwoWaysIsRefusedWithoutShowingIt() throws {
        let url = try DatabaseURL.parse("postgresql://app:s3cret@h/d")
        let error = #expect(throws: DatabasePassword.Problem.self) {
            try DatabasePassword.resolve(url: url, environmentVariable: "DB_PW", file: nil, environment: ["DB_PW": "other"])
        }
        #expect(error?.description.contains("s3cret") == false)
        #expect(try DatabasePassword.resolve(url: url, environmentVariable: nil, file: nil) == "s3cret")
        #expect(try DatabasePassword.resolve(url: Self.url, environmentVariable: nil, file: nil) == nil)
    }
}
