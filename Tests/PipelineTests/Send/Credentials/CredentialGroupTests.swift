import CampaignTestSupport
import APNs
import Foundation
import MockAPNs
import Synchronization
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// Several keys and both environments in one campaign (issue 18 items 2, 4–7), run in this process
/// against two mock APNs servers over real TLS on 127.0.0.1, one per environment.
@Suite(.serialized)
struct CredentialGroupTests {
    /// Two mocks (production, sandbox) sharing one CA; each keeps its own authentication.
    final class EnvironmentMocks {
        let authority: CertificateAuthority
        let production: MockAPNsServer
        let sandbox: MockAPNsServer

        init(production: MockAPNsConfiguration = MockAPNsConfiguration(), sandbox: MockAPNsConfiguration = MockAPNsConfiguration()) throws {
            authority = try CertificateAuthority()
            let identity = try authority.issueServerCertificate(hosts: ["127.0.0.1"])
            var first = production
            first.identity = .identity(identity)
            var second = sandbox
            second.identity = .identity(identity)
            self.production = try MockAPNsServer.start(first)
            do { self.sandbox = try MockAPNsServer.start(second) } catch {
                _ = try? self.production.stop()
                throw error
            }
        }

        deinit {
            _ = try? production.stop()
            _ = try? sandbox.stop()
        }

        var endpoints: [Endpoint] { [production, sandbox].map { Endpoint(host: "127.0.0.1", port: $0.port) } }
    }

    struct Key {
        let source: TokenSource
        let signingKey: SigningKey
        let id: String

        init(_ id: String) throws {
            signingKey = try SigningKey.generate()
            self.id = id
            source = try TokenSource(signingKey: signingKey, keyID: try ProviderToken.KeyID(id), teamID: try ProviderToken.TeamID("TEAM123456"))
        }

        func credential(_ environment: APNsEnvironment?, topics: [String]? = nil) -> CampaignCredential {
            CampaignCredential(label: id, environment: environment, topics: topics.map(Set.init), secret: .token(source))
        }

        func verifier() throws -> TokenVerifier {
            try TokenVerifier(signingKey: signingKey, keyID: try ProviderToken.KeyID(id), teamID: try ProviderToken.TeamID("TEAM123456"))
        }
    }

    struct Run {
        var result: Campaign.Result
        var records: [ResultRecord]
        var out: String
    }

    static func token(_ row: Int) -> String { InProcessCampaign.token(row) }

    /// Runs `csv` (its header and rows; `device_token` is the row's `token(n)`) with `credentials`.
    static func run(_ csv: [String], mocks: EnvironmentMocks, directory: TemporaryDirectory, credentials: [CampaignCredential],
                    configure: (inout CampaignConfiguration) -> Void = { _ in }) throws -> Run {
        let input = try directory.write("campaign.csv", csv.joined(separator: "\n") + "\n")
        var configuration = CampaignConfiguration(
            inputPath: input, authentication: credentials[0].secret.tokenAuthentication, endpoints: mocks.endpoints,
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: directory.path("out"))
        configuration.endpointEnvironments = [.production, .sandbox]
        configuration.credentials = credentials
        configuration.defaults = HeaderValues(topic: "com.example.a")
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = 4
        configuration.reactorThreads = 2
        configure(&configuration)
        let result = try Self.runWithWatchdog(Campaign(configuration: configuration))
        let rows = csv.count - 1
        // Every row ends in exactly one outcome, and appears once in the result log.
        #expect(result.summary.rows == rows && result.summary.counts.accountsFor(rows: rows))
        let log = try ResultLogReader(path: directory.path("out/results.jsonl.zst"))
        var records: [ResultRecord] = []
        while let record = try log.next() { records.append(record) }
        #expect(records.count == rows)
        #expect(Set(records.map(\.row)) == Set(1...rows))
        return Run(result: result, records: records.sorted { $0.row < $1.row }, out: directory.path("out"))
    }

    /// Runs `campaign`, interrupting it when it is stuck (a test of a stuck run then fails rather
    /// than hangs): when `progress` has not moved for `idleSeconds`, or, without `progress`, after
    /// `seconds` in all.
    // Clock: wall clock, as a hang guard only. With `progress`, stuck means no progress for
    // `idleSeconds` (a blocked reader stops every delivery), so a slow machine is never a failure.
    static func runWithWatchdog(_ campaign: Campaign, seconds: Double = 60, idleSeconds: Double = 10,
                                progress: (@Sendable () -> Int)? = nil) throws -> Campaign.Result {
        let finished = Atomic<Bool>(false)
        let timedOut = Atomic<Bool>(false)
        let start = ContinuousClock.now
        let limit = progress == nil ? seconds : 600
        let watchdog = Thread {
            var last = progress?() ?? 0
            var lastMoved = ContinuousClock.now
            while !finished.load(ordering: .acquiring) {
                Thread.sleep(forTimeInterval: 0.2)
                let now = ContinuousClock.now
                if let progress {
                    let value = progress()
                    if value != last { (last, lastMoved) = (value, now) }
                }
                let idle = progress != nil && now - lastMoved > .seconds(idleSeconds)
                if idle || now - start > .seconds(limit) {
                    timedOut.store(true, ordering: .releasing)
                    campaign.interrupt(signal: 15)
                    return
                }
            }
        }
        watchdog.start()
        defer { finished.store(true, ordering: .releasing) }
        let result = try campaign.run()
        let stuck = timedOut.load(ordering: .acquiring)
        #expect(!stuck, progress == nil ? "the campaign did not finish within \(seconds) s"
                                        : "the campaign made no progress for \(idleSeconds) s")
        return result
    }

    /// A team-scoped production key, a topic-specific production key (two topics) and a
    /// topic-specific sandbox key: each row goes by its `key_id`, else its topic's key in its
    /// environment, else the team-scoped one, and only to its environment's server; rows no key
    /// serves, with an unknown key id or a bad environment are rejected with their reasons and
    /// never sent.
    @Test(arguments: [true, false])
    func rowsGoToTheKeyTheRulesPickAndTheirEnvironmentsServerOnly(prescan: Bool) throws {
        let team = try Key("TEAMPROD01"), topical = try Key("TOPICPROD1"), sandboxKey = try Key("TOPICSAND1")
        let mocks = try EnvironmentMocks()
        var csv = ["device_token,topic,environment,key_id,push_type"]
        var expected: [Int: (key: String?, environment: String?, reason: String?)] = [:]
        func add(_ topic: String, _ environment: String, _ keyID: String, _ pushType: String = "", expect: (String?, String?, String?)) {
            csv.append("\(Self.token(csv.count)),\(topic),\(environment),\(keyID),\(pushType)")
            expected[csv.count - 1] = expect
        }
        for _ in 0..<30 {
            add("com.example.a", "", "", expect: ("TEAMPROD01", "production", nil))
            add("com.example.b", "production", "", expect: ("TOPICPROD1", "production", nil))
            add("com.example.c.voip", "", "", "voip", expect: ("TOPICPROD1", "production", nil))
            add("com.example.b", "development", "", expect: ("TOPICSAND1", "sandbox", nil))
            add("com.example.b", "production", "TEAMPROD01", expect: ("TEAMPROD01", "production", nil))
            add("com.example.b", "", "TOPICSAND1", expect: ("TOPICSAND1", "sandbox", nil))
            add("com.example.a", "sandbox", "", expect: (nil, "sandbox", "NoCredentialsForTopic"))
            add("com.example.a", "staging", "", expect: (nil, nil, "InvalidEnvironment"))
            add("com.example.a", "", "NOSUCHKEY1", expect: (nil, nil, "UnknownKeyId"))
        }
        let directory = try TemporaryDirectory()
        let run = try Self.run(csv, mocks: mocks, directory: directory, credentials: [
            team.credential(.production), topical.credential(.production, topics: ["com.example.b", "com.example.c"]),
            sandboxKey.credential(.sandbox, topics: ["com.example.b"]),
        ]) { $0.prescan = prescan }
        let endpointOf: [String: String] = ["production": mocks.endpoints[0].description, "sandbox": mocks.endpoints[1].description]
        for record in run.records {
            let want = try #require(expected[record.row])
            #expect(record.keyID == want.key && record.environment == want.environment, "row \(record.row): \(record.jsonLine)")
            if let reason = want.reason {
                #expect(record.outcome == .rejected && record.reason == reason && record.attempts == 0, "\(record.jsonLine)")
            } else {
                #expect(record.outcome == .delivered && record.endpoint == endpointOf[want.environment ?? ""], "\(record.jsonLine)")
            }
        }
        // Rejected rows were never sent: each server got exactly its environment's rows.
        #expect(mocks.production.stats().requests == 30 * 4)
        #expect(mocks.sandbox.stats().requests == 30 * 2)
        let groups = try #require(run.result.summary.groups)
        #expect(groups.byKey["TEAMPROD01"]?[.delivered] == 60 && groups.byKey["TOPICPROD1"]?[.delivered] == 60)
        #expect(groups.byKey["TOPICSAND1"]?[.delivered] == 60)
        #expect(groups.byEnvironment["sandbox"]?[.rejected] == 30)
        #expect(run.result.summary.humanText.contains("key TEAMPROD01: delivered 60\n"))
        #expect(groups.noCredentials.map { "\($0.topic) \($0.environment) \($0.rows)" } == ["com.example.a sandbox 30"])
        let json = try String(contentsOfFile: run.out + "/summary.json", encoding: .utf8)
        #expect(json.contains("\"by_key\"") && json.contains("\"no_credentials\": [{\"topic\": \"com.example.a\""))
        #expect(run.result.exitStatus == 0)
    }

    /// The production server knows key A only: key B's rows there end `aborted`
    /// InvalidProviderToken after at most one refused answer per connection of B's group, while
    /// A's rows and the sandbox rows are delivered; the run exits 2.
    @Test func aRefusedKeyAbortsOnlyItsOwnRows() throws {
        let keyA = try Key("KEYAAAAAAA"), keyB = try Key("KEYBBBBBBB")
        var production = MockAPNsConfiguration()
        production.authentication = .token(try keyA.verifier())
        let mocks = try EnvironmentMocks(production: production)
        var csv = ["device_token,topic,environment"]
        for row in 1...600 {
            csv.append("\(Self.token(row)),\(row % 2 == 0 ? "com.example.b" : "com.example.a"),\(row % 3 == 0 ? "sandbox" : "")")
        }
        let directory = try TemporaryDirectory()
        let run = try Self.run(csv, mocks: mocks, directory: directory, credentials: [
            keyA.credential(nil, topics: ["com.example.a"]), keyB.credential(nil, topics: ["com.example.b"]),
        ]) { $0.connections = 8 }
        for record in run.records {
            let refused = record.row % 2 == 0 && record.row % 3 != 0
            if refused {
                #expect(record.outcome == .aborted && record.reason == "InvalidProviderToken" && record.keyID == "KEYBBBBBBB",
                        "\(record.jsonLine)")
            } else {
                #expect(record.outcome == .delivered, "\(record.jsonLine)")
            }
        }
        // B's production group has 2 of the 8 connections (a quarter of the rows): one refusal each at most.
        let refusals = mocks.production.stats().byStatus[403, default: 0]
        #expect(refusals >= 1 && refusals <= 2, "\(refusals) refused answers")
        #expect(run.result.exitStatus == 2)
        #expect(run.result.stopCause == nil)
    }

    /// `--environment-fallback`: tokens the production server refuses as BadDeviceToken are tried
    /// once in sandbox; those delivered there say where they came from and stay out of
    /// dead-tokens.csv, which keeps only the tokens refused in both.
    @Test func fallbackDeliversSandboxTokensListedAsProduction() throws {
        var production = MockAPNsConfiguration()
        var sandbox = MockAPNsConfiguration()
        for row in 1...40 where row % 4 == 0 {
            production.scripted[Self.token(row)] = .init(status: 400, reason: "BadDeviceToken")
            if row % 20 == 0 { sandbox.scripted[Self.token(row)] = .init(status: 400, reason: "BadDeviceToken") }
        }
        let mocks = try EnvironmentMocks(production: production, sandbox: sandbox)
        let both = try Key("BOTHENVKEY")
        let csv = ["device_token"] + (1...40).map(Self.token)
        let directory = try TemporaryDirectory()
        let run = try Self.run(csv, mocks: mocks, directory: directory, credentials: [both.credential(nil)]) {
            $0.environmentFallback = true
        }
        for record in run.records {
            switch record.row {
            case let row where row % 20 == 0:
                #expect(record.outcome == .badToken && record.environment == "sandbox" && record.environmentFallbackFrom == "production")
            case let row where row % 4 == 0:
                #expect(record.outcome == .delivered && record.environment == "sandbox"
                        && record.environmentFallbackFrom == "production" && record.endpoint == mocks.endpoints[1].description)
            default:
                #expect(record.outcome == .delivered && record.environment == "production" && record.environmentFallbackFrom == nil)
            }
        }
        let dead = try String(contentsOfFile: run.out + "/dead-tokens.csv", encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(dead.map { String($0.prefix(64)) }.sorted() == [Self.token(20), Self.token(40)])
        let moves = try #require(run.result.summary.groups?.moves["production_to_sandbox"])
        #expect(moves.moved == 10 && moves.delivered == 8)
        #expect(run.result.summary.humanText.contains("--environment-fallback production to sandbox: 10 rows tried, 8 delivered"))
        // Those 10 moves are the only rows sent twice, and the line counting them says it counts moves.
        #expect(run.result.summary.humanText.contains("10 rows needed more than one request (429, 5xx, lost connections, "
                                                      + "expired provider tokens or moves to the other environment)"))
    }

    /// A campaign whose refused key aborted its rows is resumed with the key accepted: only those
    /// rows are sent again, and the log holds every row once, each with its key.
    @Test func resumeSendsTheAbortedGroupsRowsOnly() throws {
        let keyA = try Key("KEYAAAAAAA"), keyB = try Key("KEYBBBBBBB")
        var strict = MockAPNsConfiguration()
        strict.authentication = .token(try keyA.verifier())
        let directory = try TemporaryDirectory()
        var csv = ["device_token,topic"]
        for row in 1...200 { csv.append("\(Self.token(row)),\(row % 2 == 0 ? "com.example.b" : "com.example.a")") }
        let credentials = [keyA.credential(.production, topics: ["com.example.a"]), keyB.credential(.production, topics: ["com.example.b"])]
        let first = try Self.run(csv, mocks: try EnvironmentMocks(production: strict), directory: directory,
                                 credentials: credentials)
        #expect(first.records.filter { $0.outcome == .aborted }.count == 100)
        let lenient = try EnvironmentMocks()
        let second = try Self.run(csv, mocks: lenient, directory: directory, credentials: credentials) { $0.resume = true }
        #expect(second.records.allSatisfy { $0.outcome == .delivered && $0.keyID == ($0.row % 2 == 0 ? "KEYBBBBBBB" : "KEYAAAAAAA") })
        #expect(lenient.production.stats().requests == 100)
        #expect(second.result.summary.groups?.byKey["KEYAAAAAAA"]?[.delivered] == 100)
    }

    /// Rows that need an environment no endpoint serves stop the run before anything is sent.
    @Test func rowsOfAnEnvironmentWithoutEndpointStopTheRunBeforeSending() throws {
        let mocks = try EnvironmentMocks()
        let key = try Key("BOTHENVKEY")
        let directory = try TemporaryDirectory()
        let input = try directory.write("campaign.csv", "device_token,environment\n\(Self.token(1)),\n\(Self.token(2)),sandbox\n")
        var configuration = CampaignConfiguration(
            inputPath: input, authentication: .token(key.source), endpoints: [mocks.endpoints[0]],
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: directory.path("out"))
        configuration.endpointEnvironments = [.production]
        configuration.credentials = [key.credential(nil)]
        configuration.defaults = HeaderValues(topic: "com.example.a")
        configuration.defaultPayload = Array("{}".utf8)
        #expect {
            _ = try Campaign(configuration: configuration).run()
        } throws: { error in
            guard case Campaign.SetupError.noEndpoint(.sandbox, 1)? = error as? Campaign.SetupError else { return false }
            return "\(error)".contains("--endpoint sandbox=HOST:PORT")
        }
        configuration.prescan = false
        #expect(throws: Campaign.SetupError.self) { _ = try Campaign(configuration: configuration).run() }
        #expect(mocks.production.stats().requests == 0)
    }

    /// The production server stops reading after its first request (a stalled group): the reader
    /// still reads on past that group's full queue, and every sandbox row is delivered meanwhile.
    /// The run is then interrupted: the stalled group's rows end `aborted` Interrupted, each once.
    @Test func aStalledGroupDoesNotHoldUpTheOthers() throws {
        var stalled = MockAPNsConfiguration()
        stalled.stallAfter = 1
        let mocks = try EnvironmentMocks(production: stalled)
        let key = try Key("BOTHENVKEY")
        let directory = try TemporaryDirectory()
        var csv = "device_token,environment\n"
        for row in 1...24_000 { csv += "\(Self.token(row)),\(row % 2 == 0 ? "sandbox" : "production")\n" }
        var configuration = CampaignConfiguration(
            inputPath: try directory.write("campaign.csv", csv), authentication: .token(key.source),
            endpoints: mocks.endpoints, tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)),
            outputDirectory: directory.path("out"))
        configuration.endpointEnvironments = [.production, .sandbox]
        configuration.credentials = [key.credential(nil)]
        configuration.defaults = HeaderValues(topic: "com.example.a")
        configuration.defaultPayload = Array("{}".utf8)
        configuration.stopGraceSeconds = 0.2
        // Few requests in flight: most of the stalled group's 12,000 rows wait in its queue and beyond.
        configuration.maxStreams = 50
        let delivered = Atomic<Int>(0)
        let box = Mutex<Campaign?>(nil)
        let campaign = Campaign(configuration: configuration) { record in
            if record.outcome == .delivered, delivered.add(1, ordering: .relaxed).newValue == 12_000 {
                box.withLock { $0 }?.interrupt(signal: 15)
            }
        }
        box.withLock { $0 = campaign }
        // The box and the campaign's callback hold each other: broken when the test ends.
        defer { box.withLock { $0 = nil } }
        // Were the reader to wait on the stalled group's full queue, the sandbox rows past it
        // would never be read: deliveries stop, and the watchdog's interrupt then leaves them
        // undelivered. Stuck is judged by progress, not by time: under sanitizers on a busy
        // machine the 12,000 deliveries took over 20 s, yet never paused.
        let result = try Self.runWithWatchdog(campaign, progress: { delivered.load(ordering: .relaxed) })
        #expect(result.summary.counts.accountsFor(rows: 24_000))
        let log = try ResultLogReader(path: directory.path("out/results.jsonl.zst"))
        var records: [ResultRecord] = []
        while let record = try log.next() { records.append(record) }
        #expect(records.count == 24_000 && Set(records.map(\.row)).count == 24_000)
        #expect(records.filter { $0.row % 2 == 0 }.allSatisfy { $0.outcome == .delivered && $0.environment == "sandbox" })
        // The stalled server answered the first request of each of its connections at most.
        let production = records.filter { $0.row % 2 == 1 }
        let answered = production.filter { $0.outcome == .delivered }
        #expect(answered.count <= configuration.connections, "\(answered.count) production rows delivered")
        #expect(production.allSatisfy { $0.outcome == .delivered || ($0.outcome == .aborted && $0.reason == "Interrupted") },
                "\(production.first { $0.outcome != .delivered && $0.reason != "Interrupted" }?.jsonLine ?? "")")
        #expect(mocks.sandbox.stats().requests == 12_000)
    }

    /// The sandbox endpoint refuses every connection: after `--unreachable-timeout` that group's
    /// rows give up (Unreachable, exit 3) while the production rows are delivered.
    @Test func aGroupWhoseEndpointsAreUnreachableGivesUpItsOwnRowsOnly() throws {
        let mocks = try EnvironmentMocks()
        let key = try Key("BOTHENVKEY")
        let directory = try TemporaryDirectory()
        let csv = ["device_token,environment"] + (1...100).map { "\(Self.token($0)),\($0 % 4 == 0 ? "sandbox" : "")" }
        let run = try Self.run(csv, mocks: mocks, directory: directory, credentials: [key.credential(nil)]) {
            // Port 1 on loopback: nothing listens, every connect is refused.
            $0.endpoints[1] = Endpoint(host: "127.0.0.1", port: 1)
            $0.unreachableTimeoutSeconds = 1
            $0.reconnectBaseMilliseconds = 50
            $0.reconnectMaxMilliseconds = 100
        }
        for record in run.records {
            if record.row % 4 == 0 {
                #expect(record.outcome == .gaveUp && record.reason == "Unreachable" && record.environment == "sandbox")
            } else {
                #expect(record.outcome == .delivered && record.environment == "production")
            }
        }
        #expect(run.result.exitStatus == 3)
    }

    /// APNs answers UnrelatedKeyIdInToken once for some rows: each is sent again on a fresh
    /// connection of its own key, without counting an attempt, and delivered; nothing stops.
    @Test func unrelatedKeyIdInTokenResendsTheRowOnAFreshConnection() throws {
        var production = MockAPNsConfiguration()
        for row in [3, 17, 31] { production.scripted[Self.token(row)] = .init(status: 403, reason: "UnrelatedKeyIdInToken", times: 1) }
        let mocks = try EnvironmentMocks(production: production)
        let keyA = try Key("KEYAAAAAAA"), keyB = try Key("KEYBBBBBBB")
        let directory = try TemporaryDirectory()
        let csv = ["device_token,topic"] + (1...40).map { "\(Self.token($0)),\($0 % 2 == 0 ? "com.example.b" : "com.example.a")" }
        let run = try Self.run(csv, mocks: mocks, directory: directory, credentials: [
            keyA.credential(.production, topics: ["com.example.a"]), keyB.credential(.production, topics: ["com.example.b"]),
        ])
        #expect(run.records.allSatisfy { $0.outcome == .delivered && $0.attempts == 1 }, "\(run.records.first { $0.outcome != .delivered }?.jsonLine ?? "")")
        #expect(mocks.production.stats().byStatus[403] == 3)
        // Each refused connection was replaced: more connections than the four planned.
        #expect(mocks.production.stats().connections > 4)
        #expect(run.result.exitStatus == 0)
    }

    /// A one-credential run writes no group fields and no group keys in summary.json.
    @Test func aOneCredentialRunNamesNoKeyOrEnvironment() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let run = try InProcessCampaign.run(rows: 50, mocks: mocks)
        #expect(run.records.allSatisfy { $0.environment == nil && $0.keyID == nil && !$0.jsonLine.contains("key_id") })
        #expect(run.result.summary.groups == nil && !run.result.summary.json.contains("by_key"))
    }

    /// The group fields go into a result line and come back from it; left out when nil.
    @Test func recordsGroupFieldsRoundTripThroughTheResultLine() throws {
        var record = ResultRecord(row: 7, deviceToken: Self.token(7), outcome: .delivered, status: 200, attempts: 2)
        #expect(!record.jsonLine.contains("environment") && !record.jsonLine.contains("key_id"))
        (record.environment, record.keyID, record.environmentFallbackFrom) = ("sandbox", "KEY\"Q", "production")
        let line = record.jsonLine
        #expect(line.hasSuffix(#","environment":"sandbox","key_id":"KEY\"Q","environment_fallback_from":"production"}"# + "\n"))
        #expect(try ResultRecordParser.parse(Array(line.utf8.dropLast())[...]) == record)
    }

    @Test func connectionsAreSharedByRowsWithOneForEveryGroupWithRows() {
        #expect(ConnectionPlan.shares(total: 8, rows: [600, 200, 0, 200]) == [4, 2, 0, 2])
        #expect(ConnectionPlan.shares(total: 2, rows: [1, 1, 1]) == [1, 1, 1])
        #expect(ConnectionPlan.shares(total: 4, rows: [1_000_000, 1]) == [3, 1])
        #expect(ConnectionPlan.evenShares(total: 5, groups: 2) == [3, 2])
    }
}

extension CampaignCredential.Secret {
    var tokenAuthentication: CampaignConfiguration.Authentication {
        if case .token(let source) = self { return .token(source) }
        return .certificate
    }
}
