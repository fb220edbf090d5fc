import APNs

/// Which credential group a row goes to (issue 18's selection rules), decided on the reader
/// thread: the row's `key_id` if it has one; else the topic-specific credential of the row's
/// environment whose topics hold the topic's bundle id; else a team-scoped credential serving that
/// environment; among equals the first given. A row's environment is its `environment` column,
/// else the environment its `key_id`'s key is restricted to, else the run's.
struct CredentialRouter: Sendable {
    enum Route: Equatable {
        case group(Int)
        /// Not sent: `reason`; `environment` when the row's is known.
        case rejected(LocalReason, environment: APNsEnvironment?)
        /// The row needs `environment`, which no endpoint serves.
        case noEndpoint(APNsEnvironment)
    }

    private struct Candidate: Sendable {
        var label: String
        var environment: APNsEnvironment?
        var topics: Set<String>?
        /// Its group per environment (nil: no endpoint serves that environment).
        var groups: [APNsEnvironment: Int]
    }

    private let candidates: [Candidate]
    private let runEnvironment: APNsEnvironment
    /// The bundle ids' and the team-scoped choice per environment, worked out once.
    private let byBundle: [APNsEnvironment: [String: Int]]
    private let teamScoped: [APNsEnvironment: Int]

    init(configuration: CampaignConfiguration) {
        runEnvironment = configuration.environment
        let layout = CredentialGroup.layout(of: configuration)
        candidates = configuration.credentials.enumerated().map { index, credential in
            var byEnvironment: [APNsEnvironment: Int] = [:]
            for (group, entry) in layout.enumerated() where entry.credential == index { byEnvironment[entry.environment] = group }
            return Candidate(label: credential.label, environment: credential.environment, topics: credential.topics,
                             groups: byEnvironment)
        }
        var byBundle: [APNsEnvironment: [String: Int]] = [:]
        var teamScoped: [APNsEnvironment: Int] = [:]
        for (index, candidate) in candidates.enumerated() {
            for environment in APNsEnvironment.allCases where candidate.environment == nil || candidate.environment == environment {
                if let topics = candidate.topics {
                    for topic in topics where byBundle[environment]?[topic] == nil { byBundle[environment, default: [:]][topic] = index }
                } else if teamScoped[environment] == nil {
                    teamScoped[environment] = index
                }
            }
        }
        self.byBundle = byBundle
        self.teamScoped = teamScoped
    }

    /// The row's group. `environment` and `keyID`: the row's fields (nil or empty: none);
    /// `topic`: the topic it is sent with.
    func route(environment environmentField: ArraySlice<UInt8>?, keyID keyField: ArraySlice<UInt8>?,
               topic: String?) -> Route {
        var environment = runEnvironment
        var explicit = false
        if let field = environmentField, !field.isEmpty {
            guard let parsed = APNsEnvironment(parsing: String(decoding: field, as: UTF8.self)) else {
                return .rejected(.invalidEnvironment, environment: nil)
            }
            (environment, explicit) = (parsed, true)
        }
        if let field = keyField, !field.isEmpty {
            let label = String(decoding: field, as: UTF8.self)
            guard let candidate = candidates.first(where: { $0.label == label }) else {
                return .rejected(.unknownKeyId, environment: explicit ? environment : nil)
            }
            if let only = candidate.environment, only != environment {
                // A key restricted to one environment decides a row that did not say.
                guard !explicit else { return .rejected(.noCredentialsForTopic, environment: environment) }
                environment = only
            }
            return candidate.groups[environment].map(Route.group) ?? .noEndpoint(environment)
        }
        return route(environment: environment, topic: topic)
    }

    /// By topic alone, in `environment` (also `--environment-fallback`'s choice in the other one).
    func route(environment: APNsEnvironment, topic: String?) -> Route {
        let bundle = topic.map { String(KeyDescription.bundleID(ofTopic: $0)) }
        guard let index = bundle.flatMap({ byBundle[environment]?[$0] }) ?? teamScoped[environment] else {
            return .rejected(.noCredentialsForTopic, environment: environment)
        }
        return candidates[index].groups[environment].map(Route.group) ?? .noEndpoint(environment)
    }
}
