import CampaignTestSupport
import Pipeline
import Report

extension InProcessCampaign {
    /// `run` with the standard exporters attached (the timeline, the metrics, the page), as
    /// `apns-bulk send` has them.
    static func runWithExporters(rows: Int, mocks: MockEndpoints,
                                 configure: (inout CampaignConfiguration) -> Void = { _ in },
                                 whileRunning: (Campaign) -> Void = { _ in },
                                 afterRun: (String) throws -> Void = { _ in }) throws -> InProcessCampaign {
        try run(rows: rows, mocks: mocks, configure: { configuration in
            configuration.exporters = CampaignExporter.standard
            configure(&configuration)
        }, whileRunning: whileRunning, afterRun: afterRun)
    }
}
