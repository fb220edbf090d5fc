import APNs
import Foundation
@testable import Pipeline
import Testing
import TestSupport

/// The one table of reasons (`ReasonCatalog`) holds every reason a record can carry, and
/// docs/reasons.md's list is that table.
@Suite struct ReasonCatalogTests {
    static let root = SourceTree.root()

    /// Files where reason names are spelled on purpose: the tables themselves.
    static let tableFiles: Set<String> = ["Reason.swift", "LegacyStatus.swift", "LocalReason.swift",
                                          "ReasonCatalog.swift", "ReasonCatalog+Apple.swift",
                                          "ReasonCatalog+Legacy.swift"]

    /// CamelCase literals in Sources that are no record's reason, and why.
    static let notReasons: Set<String> = [
        "RefusedStream",  // the mock's --record-out marker for a stream it refused; never in a result record
        "MockAPNs",  // a configuration name
        "NaN",  // Prometheus' text for not-a-number
        "PostgreSQL", "MariaDB", "MySQL", "SQLite",  // database names, in cleanup's messages
        "LiveActivity",  // a Live Activity channel's push-type, and a spelling of the broadcast push type
    ]

    @Test func everyReasonCaseLocalReasonAndBinaryStatusHasAnEntryOfItsKind() {
        let kinds = Dictionary(grouping: ReasonCatalog.entries, by: \.name).mapValues { Set($0.map(\.kind)) }
        for reason in Reason.allCases {
            #expect(kinds[reason.name]?.contains(reason.isAPNsReason ? .apple : .local) == true, "\(reason.name)")
        }
        for reason in LocalReason.allCases {
            #expect(kinds[reason.rawValue]?.contains(.local) == true, "\(reason.rawValue)")
        }
        for status in LegacyStatus.allCases {
            #expect(kinds[status.reasonName]?.contains(.legacyBinary) == true, "\(status.reasonName)")
        }
        #expect(ReasonCatalog.entries.count == Reason.allCases.count + LocalReason.allCases.count
            + LegacyStatus.allCases.count)
    }

    @Test func everyEntryHasOneSentenceOfMeaningAndOfActionAndNoNameRepeatsWithinAKind() {
        var seen = Set<String>()
        for entry in ReasonCatalog.entries {
            #expect(seen.insert("\(entry.kind.rawValue)/\(entry.name)").inserted, "\(entry.name) twice")
            for text in [entry.meaning, entry.action] {
                #expect(text.first?.isUppercase == true && text.hasSuffix("."), "\(entry.name): \(text)")
                #expect(!text.contains("|") && !text.contains("\n"), "\(entry.name): breaks docs/reasons.md's table")
            }
        }
    }

    @Test func everyReasonTheCodeWritesForAStopOrABadRowIsCatalogued() {
        let causes: [StopCause] = [
            .credentialsRefused(reason: Reason.invalidProviderToken.name), .wrongEnvironment(answers: 3),
            .tlsFailedEverywhere(detail: ""), .proxyFailed(detail: ""), .cannotResolve(names: [], reason: ""),
            .interrupted(signal: 15), .unreachable(seconds: 1), .fatal(detail: ""), .outputFailed(detail: ""),
            .providerTokenRefusedAsExpired(ageSeconds: 0),
        ]
        let problems: [CSVRowProblem] = [.fieldTooLarge(column: .payload, bytes: 1),
                                         .unusedFieldTooLarge(field: 9, bytes: 1),
                                         .fieldCount(found: 1, expected: 2)]
        let written = causes.map(\.reasonForUnfinishedRows) + problems.map(\.reason)
            + [InputStop.reason, DuplicateTokens.reason]
        for name in written { #expect(ReasonCatalog.names.contains(name), "\(name) is not in ReasonCatalog") }
    }

    /// A reason spelled as a literal outside the tables would bypass the catalog: every quoted
    /// CamelCase word in Sources, and every capitalized word on a line about a `reason`, must be a
    /// catalogued name or a known non-reason.
    @Test func noSourceFileWritesAReasonLiteralTheCatalogLacks() throws {
        let camel = try Regex(#""([A-Z][a-z]+(?:[A-Z][a-z]*)+)""#)
        let word = try Regex(#""([A-Z][A-Za-z]+)""#)
        var unknown: [String] = []
        var scanned = 0
        let sources = Self.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift", !Self.tableFiles.contains(url.lastPathComponent) else { continue }
            scanned += 1
            let text = try String(contentsOf: url, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.drop { $0 == " " }
                if code.hasPrefix("//") { continue }
                var found = code.matches(of: camel).map { String($0.output[1].substring ?? "") }
                if code.localizedCaseInsensitiveContains("reason") {
                    found += code.matches(of: word).map { String($0.output[1].substring ?? "") }
                }
                for name in found where ReasonCatalog.entry(named: name) == nil && !Self.notReasons.contains(name) {
                    unknown.append("\(url.lastPathComponent):\(number + 1): \"\(name)\"")
                }
            }
        }
        #expect(scanned > 100)
        #expect(unknown.isEmpty, "reason literals missing from ReasonCatalog (add them, or use its constants): \(unknown)")
    }

    /// docs/reasons.md holds `ReasonCatalog.markdownTable` between its markers. To regenerate it:
    /// `make docs-reasons` (this test with APNS_BULK_WRITE_README_REASONS=1).
    @Test func docsReasonsTableIsTheCatalog() throws {
        let url = Self.root.appendingPathComponent("docs/reasons.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let begin = "<!-- reasons table: generated from ReasonCatalog by `make docs-reasons` -->\n"
        let end = "<!-- end of reasons table -->"
        let start = try #require(readme.range(of: begin), "docs/reasons.md lacks the reasons table's start marker")
        let stop = try #require(readme.range(of: end, range: start.upperBound..<readme.endIndex))
        let table = String(readme[start.upperBound..<stop.lowerBound])
        if ProcessInfo.processInfo.environment["APNS_BULK_WRITE_README_REASONS"] == "1", table != ReasonCatalog.markdownTable {
            try (readme[..<start.upperBound] + ReasonCatalog.markdownTable + readme[stop.lowerBound...])
                .write(to: url, atomically: true, encoding: .utf8)
            return
        }
        #expect(table == ReasonCatalog.markdownTable, "docs/reasons.md's reasons table is stale: run make docs-reasons")
    }

    /// The prose paragraph before the table names reasons too: each must be a catalogued one.
    @Test func docsReasonsParagraphNamesOnlyCataloguedReasons() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("docs/reasons.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\nReasons: "))
        let paragraph = String(readme[start.upperBound...]).components(separatedBy: "\n\n")[0]
        let named = paragraph.matches(of: try Regex(#"`([A-Z][A-Za-z]+)`"#)).map { String($0.output[1].substring ?? "") }
        #expect(named.count > 10)
        for name in named { #expect(ReasonCatalog.names.contains(name), "docs/reasons.md names \(name), not in ReasonCatalog") }
    }

    @Test func aBinaryRunsReasonReadsAsTheBinaryStatusAndAnHTTP2RunsAsApples() throws {
        #expect(try #require(ReasonCatalog.entry(named: "Shutdown", binary: true)).kind == .legacyBinary)
        #expect(try #require(ReasonCatalog.entry(named: "Shutdown")).kind == .apple)
        #expect(try #require(ReasonCatalog.entry(named: "InvalidTokenSize")).kind == .legacyBinary)
        #expect(try #require(ReasonCatalog.entry(named: "ConnectionLost", binary: true)).kind == .local)
        #expect(ReasonCatalog.entry(named: "SomethingAPNsAddsLater") == nil)
        #expect(ReasonCatalog.entry(named: "BadEnvironmentKeyInToken")?.name == "BadEnvironmentKeyIdInToken")
    }
}
