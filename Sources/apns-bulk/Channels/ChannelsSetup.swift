import APNs
import Foundation
import Transport

/// A `channels` subcommand's flags turned into where its requests go and with which credential,
/// every mistake found before anything is sent (exit 1). Starts the embedded mock for `--endpoint mock`.
struct ChannelsSetup {
    let target: ManagementTarget
    let environment: APNsEnvironment
    let mock: EmbeddedMock?

    init(_ options: ChannelsOptions) throws {
        if let problem = ChannelManagementAPI.problem(bundleID: options.bundleID) { throw RunFailure.usage(problem) }
        let parsed = try options.endpoint.map { try SendEndpoints.parse($0, binary: false) }
        let usesMock = if case .mock? = parsed?.target { true } else { false }
        environment = try Self.environment(options, named: parsed?.environment)

        let credentials = try options.credentials.load(usesMock: usesMock, environment: environment, caFile: options.caFile,
                                                       what: "channels")

        let endpoint: Endpoint
        var proxy: HTTPProxy?
        var mock: EmbeddedMock?
        var caFile = options.caFile
        switch parsed?.target {
        case .mock?:
            let started = try EmbeddedMock.start(options: [], keys: try credentials.mockKeys(),
                                                 clientIdentities: credentials.certificates.map(\.identity),
                                                 topic: options.bundleID, environment: environment)
            mock = started
            endpoint = started.endpoint
            caFile = started.caFile
            if let flag = options.proxy, !flag.isEmpty {
                writeStandardError("warning: --endpoint mock runs inside this process and is reached directly, not through --proxy\n")
            }
        case .address(let address)?:
            // Apple's words name its management hosts, not the push hosts `send` means by them.
            let word = options.endpoint == "production" || options.endpoint == "sandbox"
            endpoint = word ? ChannelManagementAPI.host(environment) : address
        case nil:
            endpoint = ChannelManagementAPI.host(environment)
        }
        if mock == nil {
            proxy = try SendCredentials.proxy(flag: options.proxy, for: endpoint)
        }
        let tls: TLSContext
        do { tls = try credentials.clientTLS(caFile: caFile) } catch {
            mock?.stop()
            throw error
        }
        target = ManagementTarget(endpoint: endpoint, proxy: proxy, tls: tls, tokens: credentials.keys.first?.source)
        self.mock = mock
    }

    /// `--environment`, else the one `--endpoint` names (sandbox, sandbox=HOST:PORT), else production.
    private static func environment(_ options: ChannelsOptions, named: APNsEnvironment?) throws -> APNsEnvironment {
        let chosen = options.environment.map { $0 == .sandbox ? APNsEnvironment.sandbox : .production }
        if let chosen, let named, chosen != named {
            throw RunFailure.usage("--environment \(chosen.rawValue) with --endpoint \(options.endpoint ?? ""), which is "
                                   + "\(named.rawValue)'s: channels live in one environment; give the one they belong to")
        }
        return chosen ?? named ?? .production
    }
}
