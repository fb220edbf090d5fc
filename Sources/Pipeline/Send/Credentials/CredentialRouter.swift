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
        /// The row's `key_id` names credential `key` (an index of the run's credentials), which is
        /// restricted to the other environment than the row's `environment`: not sent
        /// (NoCredentialsForTopic), and the warning says so rather than blaming the topic.
        case keyElsewhere(key: Int, environment: APNsEnvironment)
    }

    private struct Candidate: Sendable {
        var label: String
        var labelBytes: [UInt8]
        var environment: APNsEnvironment?
        var topics: Set<String>?
        /// Its group per environment (nil: no endpoint serves that environment).
        var groups: PerEnvironment<Int>
    }

    private let candidates: [Candidate]
    private let runEnvironment: APNsEnvironment
    /// The bundle ids' and the team-scoped choice per environment, worked out once.
    private let byBundle: BundleTable
    private let teamScoped: PerEnvironment<Int>

    init(configuration: CampaignConfiguration) {
        runEnvironment = configuration.environment
        let layout = CredentialGroup.layout(of: configuration)
        candidates = configuration.credentials.enumerated().map { index, credential in
            var byEnvironment = PerEnvironment<Int>()
            for (group, entry) in layout.enumerated() where entry.credential == index { byEnvironment[entry.environment] = group }
            return Candidate(label: credential.label, labelBytes: Array(credential.label.utf8), environment: credential.environment, topics: credential.topics,
                             groups: byEnvironment)
        }
        var byBundle: [(bundleID: String, environment: APNsEnvironment, index: Int)] = []
        var teamScoped = PerEnvironment<Int>()
        for (index, candidate) in candidates.enumerated() {
            for environment in APNsEnvironment.allCases where candidate.environment == nil || candidate.environment == environment {
                if let topics = candidate.topics {
                    for topic in topics { byBundle.append((topic, environment, index)) }
                } else if teamScoped[environment] == nil {
                    teamScoped[environment] = index
                }
            }
        }
        self.byBundle = BundleTable(byBundle)
        self.teamScoped = teamScoped
    }

    /// The row's group. `environment` and `keyID`: the row's fields (nil or empty: none); `topic`:
    /// the topic it is sent with. Each as the caller holds it (a string, a slice, or bytes lent from
    /// a batch, which costs no retain of the batch's storage); the router reads their bytes.
    func route<Environment: RoutedField, KeyID: RoutedField, Topic: RoutedField>(
        environment: Environment?, keyID: KeyID?, topic: Topic?) -> Route {
        Self.lend(environment) { environment in
            Self.lend(keyID) { keyID in
                Self.lend(topic) { topic in route(lentEnvironment: environment, keyID: keyID, topic: topic) }
            }
        }
    }

    private func route(lentEnvironment environmentField: UnsafeBufferPointer<UInt8>?, keyID keyField: UnsafeBufferPointer<UInt8>?,
                       topic: UnsafeBufferPointer<UInt8>?) -> Route {
        var environment = runEnvironment
        var explicit = false
        if let field = environmentField, !field.isEmpty {
            guard let parsed = APNsEnvironment(parsingBytes: field) else {
                return .rejected(.invalidEnvironment, environment: nil)
            }
            (environment, explicit) = (parsed, true)
        }
        if let field = keyField, !field.isEmpty {
            guard let index = candidates.firstIndex(where: { $0.labelBytes.elementsEqual(field) }) else {
                return .rejected(.unknownKeyId, environment: explicit ? environment : nil)
            }
            let candidate = candidates[index]
            if let only = candidate.environment, only != environment {
                // A key restricted to one environment decides a row that did not say.
                guard !explicit else { return .keyElsewhere(key: index, environment: environment) }
                environment = only
            }
            return candidate.groups[environment].map(Route.group) ?? .noEndpoint(environment)
        }
        return route(environment: environment, lentTopic: topic)
    }

    /// The label (key id) of credential `index` and the one environment it serves, for messages.
    func credential(_ index: Int) -> (label: String, environment: APNsEnvironment?) {
        (candidates[index].label, candidates[index].environment)
    }

    private static func lend<Field: RoutedField, R>(_ field: Field?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let field else { return body(nil) }
        return field.withRoutedBytes { body($0) }
    }

    /// Where a row of `topic` goes in `environment`, by topic alone, as `route` decides for a row
    /// with no `key_id`: `--environment-fallback`'s choice in the other environment.
    func groupServing(topic: String?, in environment: APNsEnvironment) -> Route {
        Self.lend(topic) { route(environment: environment, lentTopic: $0) }
    }

    private func route(environment: APNsEnvironment, lentTopic topic: UnsafeBufferPointer<UInt8>?) -> Route {
        var index: Int?
        if let topic, !byBundle.isEmpty {
            index = byBundle.index(of: UnsafeBufferPointer(rebasing: topic[..<KeyDescription.bundleIDLength(ofTopic: topic)]),
                                   in: environment)
        }
        guard let index = index ?? teamScoped[environment] else {
            return .rejected(.noCredentialsForTopic, environment: environment)
        }
        return candidates[index].groups[environment].map(Route.group) ?? .noEndpoint(environment)
    }
}

/// A row's field as `CredentialRouter.route` reads it: its bytes, lent for the call.
protocol RoutedField {
    func withRoutedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result
}

extension UnsafeBufferPointer<UInt8>: RoutedField {
    func withRoutedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result { body(self) }
}

extension ArraySlice<UInt8>: RoutedField {
    func withRoutedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result { withUnsafeBufferPointer(body) }
}

extension Array<UInt8>: RoutedField {
    func withRoutedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result { withUnsafeBufferPointer(body) }
}

extension String: RoutedField {
    func withRoutedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        var text = self
        return text.withUTF8(body)
    }
}

/// A value per environment, read per row: two stored optionals, where a dictionary keyed by the
/// environment would hash on every read.
struct PerEnvironment<Value: Sendable>: Sendable {
    private var production: Value?
    private var sandbox: Value?

    subscript(environment: APNsEnvironment) -> Value? {
        get { environment == .production ? production : sandbox }
        set {
            switch environment {
            case .production: production = newValue
            case .sandbox: sandbox = newValue
            }
        }
    }
}
