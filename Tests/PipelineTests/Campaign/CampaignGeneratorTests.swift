import Foundation
import Testing
import TestSupport
@testable import Pipeline

@Suite struct CampaignGeneratorTests {
    @Test func generatedCampaignParsesWithCSVSourceRowForRow() throws {
        let directory = try TemporaryDirectory()
        var options = CampaignGenerator.Options(rows: 2000)
        options.invalidRate = 0.1
        options.unregisteredRate = 0.1
        options.seed = 3
        var generator = CampaignGenerator(options: options)
        let totals = try generator.write(to: directory.path("c.csv.zst"), unregisteredPath: directory.path("u.txt"))
        #expect(totals.rows == 2000)

        let source = try CSVSource(path: directory.path("c.csv.zst"), chunkSize: 8192)
        #expect(source.header.columns == [.deviceToken, .payload, .priority])
        var count = 0, wellFormed = 0
        while let row = try source.next() {
            count += 1
            #expect(row.number == count)
            #expect(row.problem == nil)
            let token = row.string(.deviceToken) ?? ""
            let payload = Data(row.field(.payload) ?? [])
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
            if token.count == 64, token.allSatisfy(\.isHexDigit), object?["aps"] != nil, payload.count <= 4096,
               row.string(.priority) == "" {
                wellFormed += 1
            }
        }
        #expect(count == 2000)
        #expect(2000 - wellFormed == totals.invalid)
        let unregistered = String(decoding: try directory.read("u.txt"), as: UTF8.self).split(separator: "\n")
        #expect(unregistered.count == totals.unregistered)
    }
}
