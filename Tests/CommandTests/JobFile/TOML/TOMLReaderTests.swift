import Foundation
import Testing
import TestSupport
@testable import apns_bulk

/// The job file's TOML reader on documents that are TOML: each kind of key, string, number,
/// array and table reads to the value TOML 1.0 gives it.
@Suite struct TOMLReaderTests {
    func read(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> TOMLTable {
        do {
            return try TOMLReader.read(text)
        } catch {
            Issue.record("\(text.debugDescription): \(error)", sourceLocation: sourceLocation)
            throw error
        }
    }

    @Test func commentsBlankLinesAndLineEndsAreNotValues() throws {
        let table = try read("# a job\r\n\n  topic = \"com.example\" # the app\r\n\t\n# end")
        #expect(table == TOMLTable(["topic": .string("com.example")]))
        #expect(try read("") == TOMLTable())
        #expect(try read("\u{FEFF}a = 1") == TOMLTable(["a": .integer(1)]), "a byte-order mark is no key")
    }

    @Test func bareQuotedAndDottedKeysNameTheirPlaces() throws {
        let table = try read("""
            bare_key-1 = 1
            "quoted key" = 2
            'literal "key"' = 3
            "" = 4
            site."google.com" . port = 5
            site.name = "x"
            1234 = 6
            """)
        #expect(table.keys == ["bare_key-1", "quoted key", "literal \"key\"", "", "site", "1234"])
        #expect(table["site"] == .table(TOMLTable(["google.com": .table(TOMLTable(["port": .integer(5)])), "name": .string("x")])))
        #expect(table["1234"] == .integer(6))
    }

    @Test func basicStringsTakeEveryEscapeOfTOML() throws {
        let table = try read(#"s = "tab\there \"q\" back\\slash \b\f\n\r é \u00E9 \U0001F600""#)
        #expect(table["s"] == .string("tab\there \"q\" back\\slash \u{8}\u{C}\n\r é é 😀"))
    }

    @Test func literalStringsAreTakenAsWritten() throws {
        #expect(try read(#"path = 'C:\Users\no escapes \n'"#)["path"] == .string(#"C:\Users\no escapes \n"#))
    }

    @Test func multiLineStringsDropTheFirstLineEndAndJoinBackslashedLines() throws {
        let table = try read("""
            a = \"\"\"
            one
            two\"\"\"
            b = \"\"\"The quick \\
                  brown \\

                  fox.\"\"\"
            c = \"\"\"say "hi"\"\"\"\"
            d = '''
            raw \\n 'quoted' ''\r
            end'''
            e = ''''''
            """)
        #expect(table["a"] == .string("one\ntwo"))
        #expect(table["b"] == .string("The quick brown fox."))
        #expect(table["c"] == .string("say \"hi\"\""))
        #expect(table["d"] == .string("raw \\n 'quoted' ''\nend"))
        #expect(table["e"] == .string(""))
    }

    @Test func integersTakeUnderscoresSignsAndPrefixes() throws {
        let table = try read("""
            a = +99
            b = -17
            c = 1_000_000
            d = 0
            e = -0
            f = 0xDEAD_beef
            g = 0o755
            h = 0b1101_0110
            i = 9223372036854775807
            j = -9223372036854775808
            """)
        let expected: [Int] = [99, -17, 1_000_000, 0, 0, 0xDEAD_BEEF, 0o755, 0b1101_0110, .max, .min]
        #expect(table.entries.map(\.value) == expected.map(TOMLValue.integer))
    }

    @Test func floatsTakeFractionsExponentsInfinityAndNaN() throws {
        let table = try read("""
            a = 12.5
            b = -0.01
            c = 5e+22
            d = 1E06
            e = -2E-2
            f = 6.626e-34
            g = 224_617.445_991
            h = inf
            i = -inf
            j = +nan
            """)
        let floats = table.entries.compactMap(\.value.float)
        #expect(floats.count == 10)
        #expect(Array(floats.prefix(9)) == [12.5, -0.01, 5e22, 1e6, -0.02, 6.626e-34, 224_617.445_991, .infinity, -.infinity])
        #expect(floats[9].isNaN)
    }

    @Test func booleansAreTrueAndFalse() throws {
        #expect(try read("a = true\nb = false") == TOMLTable(["a": .boolean(true), "b": .boolean(false)]))
    }

    @Test func arraysSpanLinesHoldCommentsAndMixedTypesAndEndInAComma() throws {
        let table = try read("""
            endpoint = [
              "production",   # the default port
              "api.push.apple.com:2197",
            ]
            mixed = [1, 2.5, "three", [4, [5]], { six = 6 }, true]
            empty = [ ]
            """)
        #expect(table["endpoint"] == .array([.string("production"), .string("api.push.apple.com:2197")]))
        #expect(table["mixed"] == .array([.integer(1), .float(2.5), .string("three"),
                                          .array([.integer(4), .array([.integer(5)])]),
                                          .table(TOMLTable(["six": .integer(6)])), .boolean(true)]))
        #expect(table["empty"] == .array([]))
    }

    @Test func inlineTablesHoldDottedKeysAndNest() throws {
        let table = try read(#"point = { x = 1, y.z = "2", inner = { a = [] } }"#)
        #expect(table["point"] == .table(TOMLTable([
            "x": .integer(1), "y": .table(TOMLTable(["z": .string("2")])),
            "inner": .table(TOMLTable(["a": .array([])])),
        ])))
        #expect(try read("e = {}")["e"] == .table(TOMLTable()))
    }

    @Test func tablesCollectTheKeysUnderTheirHeaders() throws {
        let table = try read("""
            top = 1
            [mock]
            goaway-after = 5000
            [ "a b" . c ]
            d = 2
            [x.y.z]
            [x]
            w = 3
            """)
        #expect(table.keys == ["top", "mock", "a b", "x"])
        #expect(table["mock"] == .table(TOMLTable(["goaway-after": .integer(5000)])))
        #expect(table["a b"] == .table(TOMLTable(["c": .table(TOMLTable(["d": .integer(2)]))])))
        #expect(table["x"] == .table(TOMLTable(["y": .table(TOMLTable(["z": .table(TOMLTable())])), "w": .integer(3)])))
    }

    @Test func arraysOfTablesAppendOneTablePerHeader() throws {
        let table = try read("""
            [[keys]]
            key-id = "ABCDE12345"
            team-id = "TEAM123456"

            [[keys]]
            key-id = "FGHIJ67890"
            [keys.options]
            weight = 2

            [[keys.aliases]]
            name = "b"
            """)
        let second = TOMLTable([
            "key-id": .string("FGHIJ67890"),
            "options": .table(TOMLTable(["weight": .integer(2)])),
            "aliases": .array([.table(TOMLTable(["name": .string("b")]))]),
        ])
        #expect(table["keys"] == .array([
            .table(TOMLTable(["key-id": .string("ABCDE12345"), "team-id": .string("TEAM123456")])),
            .table(second),
        ]))
    }

    @Test func subTablesMayBeDefinedInsideTablesMadeByDottedKeys() throws {
        let table = try read("""
            [fruit]
            apple.color = "red"
            apple.taste.sweet = true
            [fruit.apple.texture]
            smooth = true
            """)
        let apple = table["fruit"]?.table?["apple"]?.table
        #expect(apple?.keys == ["color", "taste", "texture"])
        #expect(apple?["texture"] == .table(TOMLTable(["smooth": .boolean(true)])))
    }

    @Test(arguments: ["nightly.example.toml", "demo.toml", "many-apps.example.toml"])
    func theJobFilesInJobsRead(name: String) throws {
        let jobs = SourceTree.root().appendingPathComponent("jobs")
        let table = try read(try String(contentsOf: jobs.appendingPathComponent(name), encoding: .utf8))
        #expect(table["topic"]?.string?.hasPrefix("com.example.") == true)
        #expect(table["endpoint"]?.array?.allSatisfy { $0.string != nil } == true)
        #expect(table["connections"]?.integer != nil)
    }
}
