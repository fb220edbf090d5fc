import Foundation
import Testing
import TestSupport
@testable import Pipeline

/// `cleanup`'s reading of dead-token lists: columns by name, the merge rule every list shares,
/// and one-line refusals that name the file.
@Suite struct DeadTokenListTests {
    static let header = "device_token,reason,status,unregistered_at,row\n"

    @Test func columnsAreFoundByNameAndExtraOnesIgnored() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", "row,environment,unregistered_at,device_token,status,reason\n"
                                       + "4,production,2025-12-22T16:46:28.279Z,AB01,410,Unregistered\n")
        let list = try DeadTokenList(paths: [file])
        #expect(list.lines == [.init(token: "AB01", reason: "Unregistered", unregisteredAt: 1_766_421_988_279)])
    }

    @Test func oneLinePerTokenTheLatestDatedLineKeptAcrossFiles() throws {
        let directory = try TemporaryDirectory()
        let first = try directory.write("a.csv", Self.header
                                        + "aa01,Unregistered,410,2025-12-22T16:46:28.279Z,1\n"
                                        + "aa02,BadDeviceToken,400,,2\n")
        let second = try directory.write("b.csv", Self.header
                                         + "AA01,ExpiredToken,410,2025-12-21T00:00:00.000Z,1\n"
                                         + "aa02,Unregistered,,2025-12-20T00:00:00Z,\n"
                                         + "aa03,Unregistered,,,\n")
        let list = try DeadTokenList(paths: [first, second])
        #expect(list.lines.map(\.token) == ["aa01", "aa02", "aa03"])
        #expect(list.lines.map(\.reason) == ["Unregistered", "Unregistered", "Unregistered"])
        #expect(list.lines[2].unregisteredAt == nil)
        #expect(list.linesRead == 5)
    }

    @Test func theReasonFilterComesBeforeTheMerge() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", Self.header + "aa01,Unregistered,,,\naa01,BadDeviceToken,400,,3\n")
        let list = try DeadTokenList(paths: [file], keepsReason: { $0 == "Unregistered" })
        #expect(list.lines.map(\.reason) == ["Unregistered"])
        #expect(list.linesFilteredOut == 1)
    }

    @Test func aListWithWindowsLineEndsReadsAsOne() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", "device_token,reason,status,unregistered_at,row\r\naa01,Unregistered,410,,1\r\n"
                                       + "aa02,ExpiredToken,410,2025-12-22T16:46:28.279Z,2\r\n")
        let list = try DeadTokenList(paths: [file])
        #expect(list.lines.map(\.token) == ["aa01", "aa02"])
        #expect(list.lines[1].unregisteredAt == 1_766_421_988_279)
    }

    @Test func aTokenThatIsNotHexIsOnlyAValue() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", Self.header + "\"'; DROP TABLE devices; --\",Unregistered,410,,1\n")
        #expect(try DeadTokenList(paths: [file]).lines.map(\.token) == ["'; DROP TABLE devices; --"])
    }

    @Test func aMissingColumnIsNamedWithTheFile() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", "device_token,reason,status,row\naa01,Unregistered,410,1\n")
        let problem = #expect(throws: DeadTokenList.Problem.self) { try DeadTokenList(paths: [file]) }
        #expect(problem?.description == "\(file): no unregistered_at column in the header (device_token,reason,status,row); "
                + "a dead-token list has the columns device_token,reason,status,unregistered_at,row")
    }

    @Test func anUnreadableTimeIsNamedWithItsFileAndLine() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("dead.csv", Self.header + "aa01,Unregistered,410,,1\naa02,Unregistered,410,yesterday,2\n")
        let problem = #expect(throws: DeadTokenList.Problem.self) { try DeadTokenList(paths: [file]) }
        #expect(problem?.description.hasPrefix("\(file) line 3: unregistered_at \"yesterday\" is not an ISO 8601 UTC time") == true)
    }

    @Test func isoTimesAsApnsBulkWritesThemReadBackToTheMillisecond() {
        for milliseconds: Int64 in [0, 1_766_421_988_279, 951_782_400_000, 4_102_444_799_999] {
            #expect(ISO8601.milliseconds(ISO8601.format(milliseconds: milliseconds)) == milliseconds)
        }
        #expect(ISO8601.milliseconds("2025-12-22T16:46:28Z") == 1_766_421_988_000)
        #expect(ISO8601.milliseconds("2025-12-22T16:46:28.2799999Z") == 1_766_421_988_279)
        #expect(ISO8601.milliseconds("2025-02-29T00:00:00.000Z") == nil)
        #expect(ISO8601.milliseconds("2025-12-22 16:46:28.279Z") == nil)
    }
}
