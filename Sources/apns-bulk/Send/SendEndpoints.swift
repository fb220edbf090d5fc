import APNs
import Foundation
import Pipeline
import Transport

/// `--endpoint` and `--environment` read together: which environment each endpoint serves and
/// which environment the run's rows belong to. `production`/`sandbox` (Apple's hosts) and
/// `production=HOST:PORT`/`sandbox=HOST:PORT` name their environment; a plain `HOST:PORT` serves
/// `--environment`; `mock` stands for one embedded mock per environment the run needs.
struct SendEndpoints {
    enum Target {
        case address(Endpoint)
        case mock
    }

    struct Item {
        /// The `--endpoint` value as given.
        let name: String
        let target: Target
        /// The environment it serves (a plain HOST:PORT: the run's; `mock`: every one needed).
        let environment: APNsEnvironment
        /// Whether the value named its environment (`sandbox`, `production=HOST:PORT`, ...).
        let namesEnvironment: Bool
    }

    var items: [Item]
    /// The run's environment: `--environment`, else sandbox when every endpoint given is a sandbox one.
    let environment: APNsEnvironment
    /// Whether `--endpoint` was given at all.
    let explicit: Bool

    var onlyMock: Bool { explicit && items.allSatisfy { if case .mock = $0.target { true } else { false } } }

    init(_ command: SendCommand, binary: Bool) throws {
        explicit = !command.endpoint.isEmpty
        var parsed: [(name: String, target: Target, environment: APNsEnvironment?)] = []
        for name in command.endpoint {
            parsed.append(try Self.parse(name, binary: binary))
        }
        let named = parsed.compactMap(\.environment)
        if let choice = command.environment {
            environment = choice == .sandbox ? .sandbox : .production
        } else {
            // `--endpoint sandbox` alone has always meant a sandbox run.
            environment = !named.isEmpty && named.count == parsed.count && named.allSatisfy { $0 == .sandbox } ? .sandbox : .production
        }
        let runEnvironment = environment
        let all = parsed.map { Item(name: $0.name, target: $0.target, environment: $0.environment ?? runEnvironment,
                                    namesEnvironment: $0.environment != nil) }
        // The run's own environment first: the order connections are dealt in.
        items = all.filter { $0.environment == runEnvironment } + all.filter { $0.environment != runEnvironment }
    }

    /// One `--endpoint` value: its target and the environment it names, if any (`channels` reads its one the same way).
    static func parse(_ name: String, binary: Bool) throws -> (name: String, target: Target, environment: APNsEnvironment?) {
        if name == "mock" { return (name, .mock, nil) }
        var address = name
        var environment: APNsEnvironment?
        if let equals = name.firstIndex(of: "=") {
            let label = String(name[..<equals])
            guard label == "production" || label == "sandbox" else {
                throw RunFailure.usage("--endpoint \(name): \"\(label)\" is no environment; use production=HOST:PORT or sandbox=HOST:PORT")
            }
            environment = APNsEnvironment(rawValue: label)
            address = String(name[name.index(after: equals)...])
            if address == "mock" || address == "production" || address == "sandbox" || address.isEmpty {
                throw RunFailure.usage("--endpoint \(name): give HOST:PORT after \(label)=; for Apple's host write --endpoint \(label), for the embedded mock --endpoint mock")
            }
        } else if name == "production" || name == "sandbox" {
            environment = APNsEnvironment(rawValue: name)
            if binary, let gateway = SendSetup.binaryGateways[name] { return (name, .address(gateway), environment) }
        }
        let endpoint: Endpoint
        do { endpoint = try Endpoint(parsing: address) } catch {
            throw RunFailure.usage("--endpoint \(name): \(error.reason); use \(forms)")
        }
        // A word that is none of the known ones ("prod", "sandbx", "development") would be looked
        // up as a host on port 443 and end minutes later in "cannot resolve": a host needs its port.
        guard name == "production" || name == "sandbox" || hasPort(address) else {
            throw RunFailure.usage("--endpoint \(name): not one of the words production, sandbox or mock, and no port "
                + "(for a host, give its port, e.g. \(endpoint.description)); use \(forms)")
        }
        return (name, .address(endpoint), environment)
    }

    private static let forms = "production, sandbox, mock, HOST:PORT, production=HOST:PORT, sandbox=HOST:PORT or [IPv6]:PORT"

    /// Whether an address that `Endpoint(parsing:)` read gives its port: `HOST:PORT`, `[IPv6]:PORT`.
    private static func hasPort(_ address: String) -> Bool {
        let text = address.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("[") { return text.contains("]:") }
        return text.contains(":")
    }

    /// `--mock-option` configures the embedded mock: without `--endpoint mock` it would be ignored
    /// while the run goes to the endpoints given (Apple's production by default), so it is refused.
    func checkMockOptions(_ options: [String]) throws {
        guard let first = options.first, !items.contains(where: { if case .mock = $0.target { true } else { false } }) else {
            return
        }
        let endpoints = explicit ? items.map(\.name).joined(separator: ", ") : "production (api.push.apple.com:443, the default)"
        throw RunFailure.usage("--mock-option \(first) configures the embedded mock of --endpoint mock, but this run's "
            + "endpoints are \(endpoints), where it would be ignored: add --endpoint mock to rehearse against the mock, "
            + "or leave --mock-option out; nothing was sent")
    }

    /// Whether every endpoint serves the run's environment (today's one-environment run).
    var servesOneEnvironment: Bool { items.allSatisfy { !$0.namesEnvironment || $0.environment == environment } }

    /// Without `--endpoint`: Apple's host of the run's environment, and of the other one too when
    /// the run may need it (several credentials or environments).
    /// With `binary`, Apple's binary gateways instead.
    mutating func addDefaults(bothEnvironments: Bool, binary: Bool) {
        guard !explicit else { return }
        let order = bothEnvironments ? [environment, environment.other] : [environment]
        items = order.map { environment in
            let http2: Endpoint = environment == .production ? .production : .sandbox
            let endpoint = binary ? SendSetup.binaryGateways[environment.rawValue] ?? http2 : http2
            return Item(name: environment.rawValue, target: .address(endpoint), environment: environment, namesEnvironment: true)
        }
    }

    /// Refuses a run whose credentials or flags need an environment no endpoint serves: a
    /// rehearsal must never reach Apple by default. `needs` says why each one is needed.
    func check(needs: [(environment: APNsEnvironment, why: String)]) throws {
        for need in needs where !items.contains(where: { item in
            if case .mock = item.target { return true }
            return item.environment == need.environment
        }) {
            let served = Set(items.map(\.environment.rawValue)).sorted().joined(separator: ", ")
            throw RunFailure.usage("no --endpoint serves \(need.environment.rawValue), which \(need.why) needs (the endpoints given serve \(served)); add --endpoint \(need.environment.rawValue)=HOST:PORT (or --endpoint \(need.environment.rawValue) for Apple's), or leave that out")
        }
    }
}
