import APNs
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// The prescan counts each credential group's rows as it scans (`GroupRowTally`) instead of a pass
/// of its own: its counts must be the ones that pass (field by field, as the reader parses) gets,
/// for quoted fields, spaces, any case, `development`, a `.voip` topic, an empty topic, key ids.
@Suite struct GroupRowTallyTests {
    typealias Groups = CredentialGroupTests

    static let csv = """
        device_token, Topic ,ENVIRONMENT,key_id,payload
        \(Groups.token(1)),com.example.a,,,"{}"
        \(Groups.token(2)),"com.example.b",production,,"{""aps"":{}}"
        \(Groups.token(3)), com.example.b , Development ,,{}
        \(Groups.token(4)),com.example.b.voip,sandbox,,{}
        \(Groups.token(5)),com.example.b,,TOPICSAND1,{}
        \(Groups.token(6)),"com.example.b",production,"TEAMPROD01",{}
        \(Groups.token(7)),,,,{}
        \(Groups.token(8)),com.example.a,sandbox,,{}
        \(Groups.token(9)),com.example.a,staging,,{}
        \(Groups.token(10)),com.example.a,,NOSUCHKEY1,{}
        \(Groups.token(11)),com.example.c,PRODUCTION,,{}

        """

    static func configuration(_ path: String, environments: [APNsEnvironment] = [.production, .sandbox]) throws -> CampaignConfiguration {
        let team = try Groups.Key("TEAMPROD01"), topical = try Groups.Key("TOPICPROD1"), sandboxKey = try Groups.Key("TOPICSAND1")
        var configuration = CampaignConfiguration(
            inputPath: path, authentication: team.credential(.production).secret.tokenAuthentication,
            endpoints: environments.map { _ in Endpoint(host: "127.0.0.1", port: 9) }, tls: try TLSContext.client(),
            outputDirectory: path + ".out")
        configuration.endpointEnvironments = environments
        configuration.credentials = [team.credential(.production), topical.credential(.production, topics: ["com.example.b"]),
                                     sandboxKey.credential(.sandbox, topics: ["com.example.b"])]
        configuration.defaults = HeaderValues(topic: "com.example.a")
        return configuration
    }

    /// The rows per group as the pass of its own counts them (no scan's count given).
    static func countedByTheirOwnPass(_ configuration: CampaignConfiguration, header: CSVHeader) throws -> [Int]? {
        var columns = Campaign.groupColumns(configuration)
        columns.prescanCount = nil
        try Campaign.prepareGroups(&columns, header: header, configuration: configuration)
        return columns.rows
    }

    @Test(arguments: [false, true])
    func prescanCountsEachGroupsRowsAsTheirOwnPassDoes(findingDuplicates: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("campaign.csv", Self.csv)
        let configuration = try Self.configuration(path)
        let columns = Campaign.groupColumns(configuration)
        let tally = try #require(columns.prescanCount)
        let duplicates = findingDuplicates ? DuplicateScanRequest(defaultTopic: "com.example.a", bloomBytes: 1 << 16) : nil
        let prescan = try Prescan.run(path: path, duplicates: duplicates, groups: tally)
        #expect(tally.isComplete)
        #expect(prescan.rows == 11)
        #expect((prescan.duplicateSuspects != nil) == findingDuplicates)
        let reference = try #require(try Self.countedByTheirOwnPass(configuration, header: prescan.header))
        #expect(tally.rows == reference)
        // Groups in layout order; the rows by hand: team key (1, 6, 7, 11), production topic key
        // (2), sandbox topic key (3, 4, 5); 8-10 rejected.
        let layout = CredentialGroup.layout(of: configuration)
        let byLabel = Dictionary(uniqueKeysWithValues: layout.enumerated().map {
            ("\(configuration.credentials[$0.element.credential].label)/\($0.element.environment)", tally.rows[$0.offset])
        })
        #expect(byLabel["TEAMPROD01/production"] == 4)
        #expect(byLabel["TOPICPROD1/production"] == 1)
        #expect(byLabel["TOPICSAND1/sandbox"] == 3)
        #expect(tally.missing.isEmpty)
    }

    @Test func rowsNeedingAnEnvironmentWithoutEndpointAreCountedApartAndStopTheRun() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("campaign.csv", Self.csv)
        var configuration = try Self.configuration(path, environments: [.production])
        var columns = Campaign.groupColumns(configuration)
        let tally = try #require(columns.prescanCount)
        let prescan = try Prescan.run(path: path, duplicates: nil, groups: tally)
        #expect(tally.missing == [.sandbox: 3])
        #expect(throws: Campaign.SetupError.self) {
            try Campaign.prepareGroups(&columns, header: prescan.header, configuration: configuration)
        }
        configuration.prescan = false
        #expect(Campaign.groupColumns(configuration).prescanCount == nil, "without a prescan nothing counts")
    }

    @Test func aHeaderNamingAGroupColumnTwiceLeavesTheCountToTheirOwnPass() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("campaign.csv", "device_token,topic,environment,environment,payload\n\(Groups.token(1)),com.example.b,sandbox,production,{}\n")
        let configuration = try Self.configuration(path)
        let tally = try #require(Campaign.groupColumns(configuration).prescanCount)
        let prescan = try Prescan.run(path: path, duplicates: nil, groups: tally)
        #expect(!tally.isComplete)
        #expect(try Self.countedByTheirOwnPass(configuration, header: prescan.header)?.reduce(0, +) == 1)
    }
}
