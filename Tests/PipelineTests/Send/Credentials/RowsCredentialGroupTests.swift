import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// `Campaign.run(rows:)` with several credentials: a `CampaignRow`'s `environment` and `keyID`
/// route it as the CSV's columns do, against two mock servers (one per environment) over real TLS.
@Suite(.serialized)
struct RowsCredentialGroupTests {
    typealias Groups = CredentialGroupTests

    static func configuration(_ mocks: Groups.EnvironmentMocks, _ directory: TemporaryDirectory, credentials: [CampaignCredential],
                              endpoints: Int = 2) throws -> CampaignConfiguration {
        var configuration = CampaignConfiguration(
            inputPath: "", authentication: credentials[0].secret.tokenAuthentication, endpoints: Array(mocks.endpoints.prefix(endpoints)),
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: directory.path("out"))
        configuration.endpointEnvironments = Array([APNsEnvironment.production, .sandbox].prefix(endpoints))
        configuration.credentials = credentials
        configuration.defaults = HeaderValues(topic: "com.example.a")
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = 4
        configuration.reactorThreads = 2
        return configuration
    }

    /// The same rules as a file's rows, for a collection (counted and routed first, as the
    /// prescan does) and for a sequence read once.
    @Test(arguments: [true, false])
    func rowsFromMemoryGoToTheKeyTheirEnvironmentAndKeyIDPick(collection: Bool) throws {
        let team = try Groups.Key("TEAMPROD01"), topical = try Groups.Key("TOPICPROD1"), sandboxKey = try Groups.Key("TOPICSAND1")
        let mocks = try Groups.EnvironmentMocks()
        var rows: [CampaignRow] = []
        var expected: [(key: String?, environment: String?, reason: String?)] = []
        func add(_ topic: String, _ environment: String?, _ keyID: String?, expect: (String?, String?, String?)) {
            rows.append(CampaignRow(deviceToken: Groups.token(rows.count + 1), topic: topic, environment: environment, keyID: keyID))
            expected.append(expect)
        }
        for _ in 0..<10 {
            add("com.example.a", nil, nil, expect: ("TEAMPROD01", "production", nil))
            add("com.example.b", "production", nil, expect: ("TOPICPROD1", "production", nil))
            add("com.example.b", "development", nil, expect: ("TOPICSAND1", "sandbox", nil))
            add("com.example.b", nil, "TOPICSAND1", expect: ("TOPICSAND1", "sandbox", nil))
            add("com.example.b", "production", "TEAMPROD01", expect: ("TEAMPROD01", "production", nil))
            add("com.example.a", "sandbox", nil, expect: (nil, "sandbox", "NoCredentialsForTopic"))
            add("com.example.a", "staging", nil, expect: (nil, nil, "InvalidEnvironment"))
            add("com.example.a", nil, "NOSUCHKEY1", expect: (nil, nil, "UnknownKeyId"))
        }
        let directory = try TemporaryDirectory()
        let configuration = try Self.configuration(mocks, directory, credentials: [
            team.credential(.production), topical.credential(.production, topics: ["com.example.b"]),
            sandboxKey.credential(.sandbox, topics: ["com.example.b"]),
        ])
        let campaign = Campaign(configuration: configuration)
        let result = collection ? try campaign.run(rows: rows) : try campaign.run(rows: AnySequence(rows))
        #expect(result.summary.rows == rows.count && result.summary.counts.accountsFor(rows: rows.count))
        let log = try ResultLogReader(path: directory.path("out/results.jsonl.zst"))
        var records: [ResultRecord] = []
        while let record = try log.next() { records.append(record) }
        #expect(records.map(\.row).sorted() == Array(1...rows.count), "each row once")
        for record in records {
            let want = expected[record.row - 1]
            #expect(record.keyID == want.key && record.environment == want.environment, "row \(record.row): \(record.jsonLine)")
            if let reason = want.reason {
                #expect(record.outcome == .rejected && record.reason == reason, "\(record.jsonLine)")
            } else {
                #expect(record.outcome == .delivered, "\(record.jsonLine)")
            }
        }
        #expect(mocks.production.stats().requests == 30 && mocks.sandbox.stats().requests == 20, "each server its environment's rows")
        #expect(result.summary.groups?.noCredentials.map { "\($0.topic) \($0.environment) \($0.rows)" } == ["com.example.a sandbox 10"])
        #expect(result.exitStatus == 0)
    }

    /// As a file's prescan: a collection with a row that needs an environment no endpoint serves
    /// stops the run before anything is sent, naming it and the rows; a sequence read once is
    /// refused when any row might (one credential serves both environments).
    @Test func rowsOfAnEnvironmentWithoutEndpointStopTheRunBeforeSending() throws {
        let mocks = try Groups.EnvironmentMocks()
        let key = try Groups.Key("BOTHENVKEY")
        let directory = try TemporaryDirectory()
        let configuration = try Self.configuration(mocks, directory, credentials: [key.credential(nil)], endpoints: 1)
        let rows = [CampaignRow(deviceToken: Groups.token(1)), CampaignRow(deviceToken: Groups.token(2), environment: "sandbox")]
        #expect {
            _ = try Campaign(configuration: configuration).run(rows: rows)
        } throws: { error in
            guard case Campaign.SetupError.noEndpoint(.sandbox, 1)? = error as? Campaign.SetupError else { return false }
            return true
        }
        #expect {
            _ = try Campaign(configuration: configuration).run(rows: AnySequence(rows))
        } throws: { error in
            guard case Campaign.SetupError.noEndpoint(.sandbox, nil)? = error as? Campaign.SetupError else { return false }
            return true
        }
        #expect(mocks.production.stats().requests == 0)
    }
}
