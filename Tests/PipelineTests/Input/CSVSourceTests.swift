import Foundation
import Testing
import TestSupport
@testable import Pipeline

@Suite struct CSVSourceTests {
    func rows(_ path: String, chunkSize: Int = 256 * 1024) throws -> [CSVRow] {
        let source = try CSVSource(path: path, chunkSize: chunkSize)
        var rows: [CSVRow] = []
        while let row = try source.next() { rows.append(row) }
        return rows
    }

    @Test func quotedFieldsKeepCommasDoubledQuotesNewlinesAndUTF8() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", """
            device_token,payload
            aa01,"{""aps"":{""alert"":""Hi, there""}}"
            aa02,"{""aps"":{""alert"":""line1
            line2""}}"
            aa03,"{""aps"":{""alert"":""Grüße 🎉""}}"

            """)
        let rows = try rows(path)
        #expect(rows.map(\.number) == [1, 2, 3])
        #expect(rows.map { $0.string(.deviceToken) } == ["aa01", "aa02", "aa03"])
        #expect(rows[0].string(.payload) == #"{"aps":{"alert":"Hi, there"}}"#)
        #expect(rows[1].string(.payload) == "{\"aps\":{\"alert\":\"line1\nline2\"}}")
        #expect(rows[2].string(.payload) == #"{"aps":{"alert":"Grüße 🎉"}}"#)
        #expect(rows.allSatisfy { $0.problem == nil })
    }

    @Test func columnsAreMappedByNameInAnyOrderAndUnknownOnesIgnored() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", """
            customer,Priority,payload,topic,DEVICE_TOKEN,apns_id
            alice,5,{},com.example,abcd,123e4567-e89b-12d3-a456-426614174000
            bob,,"{}",,ef01,

            """)
        let source = try CSVSource(path: path)
        #expect(source.header.columns == [.priority, .payload, .topic, .deviceToken, .apnsID])
        #expect(source.header.fieldCount == 6)
        let first = try #require(try source.next())
        #expect(first.string(.deviceToken) == "abcd")
        #expect(first.string(.priority) == "5")
        #expect(first.string(.topic) == "com.example")
        #expect(first.string(.apnsID) == "123e4567-e89b-12d3-a456-426614174000")
        #expect(first.field(.pushType) == nil)
        let second = try #require(try source.next())
        #expect(second.string(.deviceToken) == "ef01")
        #expect(second.string(.priority) == "")
        #expect(try source.next() == nil)
    }

    @Test func compressedInputYieldsTheSameRowsAsPlainInput() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token,payload\n"
        for index in 1...5000 { text += "tok\(index),\"{\"\"n\"\":\(index), \"\"s\"\":\"\"é,\"\"}\"\n" }
        let plain = try directory.write("c.csv", text)
        let compressed = try ZstdCLI.compress(plain)
        let fromPlain = try rows(plain, chunkSize: 4096)
        let fromZstd = try rows(compressed, chunkSize: 4096)
        #expect(fromPlain.count == 5000)
        #expect(fromZstd.map(\.number) == fromPlain.map(\.number))
        #expect(fromZstd.map { $0.string(.payload) } == fromPlain.map { $0.string(.payload) })
        #expect(fromZstd.map { $0.string(.deviceToken) } == fromPlain.map { $0.string(.deviceToken) })
    }

    @Test func rowsSpanningChunkBoundariesAreWhole() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token,payload\n"
        var payloads: [String] = []
        for index in 1...300 {
            let payload = "{\"\"body\"\":\"\"" + String(repeating: "x", count: index * 7) + "\"\"}"
            payloads.append(payload.replacingOccurrences(of: "\"\"", with: "\""))
            text += "t\(index),\"\(payload)\"\n"
        }
        let path = try directory.write("c.csv", text)
        #expect(text.utf8.count > 3 * 1000)
        let rows = try rows(path, chunkSize: 1000)
        #expect(rows.map(\.number) == Array(1...300))
        #expect(rows.map { $0.string(.payload) ?? "" } == payloads)
        #expect(rows.map { $0.string(.deviceToken) ?? "" } == (1...300).map { "t\($0)" })
    }

    @Test func aFieldOverSixtyFourKiBIsFlaggedAndTheRunGoesOn() throws {
        let directory = try TemporaryDirectory()
        let big = String(repeating: "a", count: 65537)
        let exact = String(repeating: "b", count: 65536)
        let path = try directory.write("c.csv", "device_token,payload\nt1,\"\(big)\"\nt2,\(exact)\nt3,{}\n")
        let rows = try rows(path, chunkSize: 8192)
        #expect(rows.count == 3)
        #expect(rows[0].problem == .fieldTooLarge(column: .payload, bytes: 65537))
        #expect(rows[0].field(.payload) == nil)
        #expect(rows[1].problem == nil)
        #expect(rows[1].field(.payload)?.count == 65536)
        #expect(rows[2].string(.payload) == "{}")
    }

    @Test func aFieldOverSixtyFourKiBInAColumnNotInUseIsFlaggedToo() throws {
        let directory = try TemporaryDirectory()
        let big = String(repeating: "n", count: 65537)
        let exact = String(repeating: "m", count: 65536)
        let path = try directory.write("c.csv", """
            device_token,notes,payload
            t1,"\(big)",{}
            t2,\(exact),{}
            t3,x,{},"\(big)"
            t4,x,{}

            """)
        let rows = try rows(path, chunkSize: 8192)
        #expect(rows.count == 4)
        #expect(rows[0].problem == .unusedFieldTooLarge(field: 2, bytes: 65537))
        #expect(rows[0].problem?.reason == "FieldTooLarge")
        #expect(rows[0].problem?.description == "field 2 (a column not in use) is 65537 bytes, over the 65536-byte limit")
        #expect(rows[0].string(.payload) == "{}")
        #expect(rows[1].problem == nil)
        // Past the header's end: the size is found before the field count, and named first.
        #expect(rows[2].problem == .unusedFieldTooLarge(field: 4, bytes: 65537))
        #expect(rows[3].problem == nil)
    }

    @Test func aRowWithTheWrongFieldCountIsFlaggedNotFatal() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload\nt1,\"{\"\"a\"\":1}\"\nt2\nt3,{},extra\nt4,{}")
        let rows = try rows(path)
        #expect(rows.map(\.number) == [1, 2, 3, 4])
        #expect(rows[0].problem == nil)
        #expect(rows[1].problem == .fieldCount(found: 1, expected: 2))
        #expect(rows[1].field(.payload) == nil)
        #expect(rows[2].problem == .fieldCount(found: 3, expected: 2))
        #expect(rows[3].string(.payload) == "{}")
        #expect(rows[3].problem == nil)
    }

    @Test func blankLinesCRLFAndABOMAreHandled() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "\u{FEFF}device_token\r\n\r\n t1 \r\n\r\nt2\r\n")
        let rows = try rows(path)
        #expect(rows.map(\.number) == [1, 2])
        #expect(rows.map { $0.string(.deviceToken) } == ["t1", "t2"])
    }

    @Test func batchesCoverEveryRowOnce() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token\n"
        for index in 1...10_000 { text += "token\(index)\n" }
        let path = try directory.write("c.csv", text)
        let source = try CSVSource(path: path, chunkSize: 16 * 1024)
        var numbers: [Int] = []
        var batches = 0
        while let batch = try source.nextBatch() {
            batches += 1
            numbers += batch.map(\.number)
        }
        #expect(batches > 1)
        #expect(numbers == Array(1...10_000))
    }

    @Test func aBatchReadInPlaceGivesWhatItsRowsGive() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", """
            device_token,payload,priority,topic
            t1,"{""a"":1}",5,com.example
            t2
            t3,{},,

            """)
        let source = try CSVSource(path: path)
        let batch = try #require(try source.nextBatch())
        #expect(batch.count == 3)
        for index in batch.indices {
            let row = batch[index]
            #expect(batch.number(at: index) == row.number)
            #expect(batch.problem(at: index) == row.problem)
            for column in CSVColumn.allCases {
                #expect(batch.field(column, at: index) == row.field(column))
                #expect(batch.fieldRange(column, at: index)?.count == row.field(column)?.count)
            }
        }
        #expect(batch.problem(at: 1) == .fieldCount(found: 1, expected: 4))
        #expect(batch.fieldRange(.priority, at: 2)?.isEmpty == true)
        #expect(batch.fieldRange(.pushType, at: 0) == nil)
    }
}
