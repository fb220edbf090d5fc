import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import MockAPNs

@Suite struct MockAPNsFaultTests {
    static func rules(_ adjust: (inout MockAPNsConfiguration) -> Void) -> MockAPNsRules {
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .tokenPresenceOnly
        adjust(&configuration)
        return MockAPNsRules(configuration: configuration)
    }

    static func token(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    @Test func anUnregisteredTokenAnswers410WithTheFileTimestamp() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("dead.csv")
        try "# dead tokens\n\(Self.token(1).uppercased()),1700000000123\n\(Self.token(2))\n".write(toFile: file, atomically: true, encoding: .utf8)
        let dead = try MockAPNsFiles.unregistered(path: file, defaultTimestamp: 42)
        let rules = Self.rules { $0.unregistered = dead }
        let first = rules.answer(request(path: "/3/device/" + Self.token(1), jwt: "x"))
        #expect(first.status == 410)
        #expect(first.reason == "Unregistered")
        #expect(first.timestamp == 1_700_000_000_123)
        #expect(rules.answer(request(path: "/3/device/" + Self.token(2), jwt: "x")).timestamp == 42)
        #expect(rules.answer(request(path: "/3/device/" + Self.token(3), jwt: "x")).status == 200)
    }

    @Test func aScriptedAnswerHoldsForItsTimesThenTheTokenIsServed() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("respond.csv")
        try "\(Self.token(1)),503,Shutdown,2\n\(Self.token(2)),403,BadCertificateEnvironment\n".write(toFile: file, atomically: true, encoding: .utf8)
        let rules = Self.rules { $0.scripted = try! MockAPNsFiles.scripted(path: file) }
        var connection = MockConnectionAuth()
        let statuses = (0..<3).map { _ in rules.answer(request(path: "/3/device/" + Self.token(1), jwt: "x"), connection: &connection) }
        #expect(statuses.map(\.status) == [503, 503, 200])
        #expect(statuses[0].reason == "Shutdown")
        let always = (0..<3).map { _ in rules.answer(request(path: "/3/device/" + Self.token(2), jwt: "x")).reason }
        #expect(always == ["BadCertificateEnvironment", "BadCertificateEnvironment", "BadCertificateEnvironment"])
    }

    @Test func randomFaultsAreAFunctionOfSeedTokenAndAttempt() {
        let configure: (inout MockAPNsConfiguration) -> Void = {
            $0.seed = 7
            $0.failures = [MockAPNsFailureRate(status: 500, rate: 0.2), MockAPNsFailureRate(status: 503, rate: 0.1)]
            $0.tooManyRequestsRate = 0.1
            $0.refuseStreamsRate = 0.1
        }
        func run(order: [Int]) -> [String: [Int]] {
            let rules = Self.rules(configure)
            var seen: [String: [Int]] = [:]
            for round in 0..<3 {
                for index in order {
                    let token = Self.token(index)
                    _ = round
                    seen[token, default: []].append(rules.answer(request(path: "/3/device/" + token, jwt: "x")).status)
                }
            }
            return seen
        }
        let forward = run(order: Array(0..<400))
        let backward = run(order: Array((0..<400).reversed()))
        #expect(forward == backward)
        let all = forward.values.flatMap { $0 }
        let share = { (status: Int) in Double(all.filter { $0 == status }.count) / Double(all.count) }
        #expect(abs(share(500) - 0.9 * 0.2) < 0.05)
        #expect(abs(share(503) - 0.9 * 0.1) < 0.04)
        #expect(abs(share(429) - 0.9 * 0.1) < 0.04)
        #expect(abs(share(0) - 0.1) < 0.04)
        // Another seed draws other faults.
        let other = Self.rules { configure(&$0); $0.seed = 8 }
        let otherStatuses = (0..<400).map { other.answer(request(path: "/3/device/" + Self.token($0), jwt: "x")).status }
        #expect(otherStatuses != (0..<400).map { forward[Self.token($0)]![0] })
    }

    @Test func badFaultSpecsAndFilesAreRefusedWithTheirLine() throws {
        #expect(throws: MockAPNsError.self) { try MockAPNsFiles.failures("404:0.1") }
        #expect(throws: MockAPNsError.self) { try MockAPNsFiles.failures("500:2") }
        #expect(try MockAPNsFiles.failures("500:0.01,503:0.005") == [.init(status: 500, rate: 0.01), .init(status: 503, rate: 0.005)])
        let directory = try TemporaryDirectory()
        let file = directory.path("mock.csv")
        try "\(Self.token(1))\nnot-hex\n".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try MockAPNsFiles.unregistered(path: file, defaultTimestamp: 0)
            Issue.record("a bad token was accepted")
        } catch {
            #expect(error.description.contains(":2:"))
        }
    }
}
