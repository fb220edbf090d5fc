import Testing
import Transport
@testable import Pipeline

/// A name that does not resolve, on every endpoint, stops the run at once; one that DNS does not
/// answer is waited for; any endpoint that resolves or ever worked keeps the run going.
@Suite struct LookupFailureTests {
    func shared(endpoints: Int) throws -> CampaignShared {
        let names = (0..<endpoints).map { Endpoint(host: "name\($0).invalid", port: 443) }
        let configuration = CampaignConfiguration(inputPath: "c.csv", authentication: .certificate, endpoints: names,
                                                  tls: try TLSContext.client(), outputDirectory: "out")
        return CampaignShared(configuration: configuration, control: RunControl())
    }

    func missing(_ index: Int) -> CampaignShared.LookupFailure {
        .init(host: "name\(index).invalid", reason: "Name or service not known", definite: true)
    }

    @Test func aNameMissingOnEveryEndpointStopsTheRunAtOnce() throws {
        let shared = try shared(endpoints: 2)
        shared.noteLookup(endpointIndex: 0, failure: missing(0))
        #expect(!shared.control.isStopping, "one endpoint of two")
        shared.noteLookup(endpointIndex: 1, failure: missing(1))
        #expect(shared.control.stopCause == .cannotResolve(names: ["name0.invalid", "name1.invalid"],
                                                           reason: "Name or service not known"))
        #expect(shared.control.stopCause?.outcomeForUnfinishedRows == .aborted)
        #expect(shared.control.stopCause?.message.hasPrefix("cannot resolve name0.invalid, name1.invalid") == true)
    }

    @Test func aLookupThatResolvesOrAnEndpointThatWorkedKeepsTheRunGoing() throws {
        let resolvedAgain = try shared(endpoints: 2)
        resolvedAgain.noteLookup(endpointIndex: 0, failure: missing(0))
        resolvedAgain.noteLookup(endpointIndex: 0, failure: nil)
        resolvedAgain.noteLookup(endpointIndex: 1, failure: missing(1))
        #expect(!resolvedAgain.control.isStopping)

        let worked = try shared(endpoints: 1)
        worked.noteConnectionReady(endpointIndex: 0)
        worked.noteConnectionDown()
        worked.noteLookup(endpointIndex: 0, failure: missing(0))
        #expect(!worked.control.isStopping)
        #expect(worked.stopCauseWhenUnreachable(seconds: 120)
                == .unreachable(seconds: 120, endpoints: [UnreachableEndpoint(endpoint: "name0.invalid:443",
                                                                              cause: "cannot resolve name0.invalid: Name or service not known")]))
    }

    @Test func aResolverThatDoesNotAnswerIsWaitedForThenNamed() throws {
        let shared = try shared(endpoints: 1)
        shared.noteLookup(endpointIndex: 0, failure: .init(host: "name0.invalid", reason: "Temporary failure in name resolution",
                                                           definite: false))
        #expect(!shared.control.isStopping)
        #expect(shared.stopCauseWhenUnreachable(seconds: 120)
                == .cannotResolve(names: ["name0.invalid"], reason: "Temporary failure in name resolution"))
    }
}
