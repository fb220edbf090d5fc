import APNs

extension Campaign {
    /// The name rows from memory go by where a file's path would: in messages and campaign.json.
    public static let rowsInputName = "rows given to Campaign.run(rows:)"

    /// Runs the campaign from rows in memory to the end, instead of the file at
    /// `configuration.inputPath` (which is not read).
    ///
    /// The rows go through the same checks as a file's, on the same reader thread: a bad row ends
    /// `rejected` with the reason its CSV line would get, and the run goes on. Rows are numbered
    /// from 1 in sequence order, in the result files and in the records `onOutcome` receives. The
    /// sequence is iterated on the reader thread, once and to its end (also after a stop: every
    /// row still gets its record), so it must end; it is given up by the caller (`sending`).
    ///
    /// - When `rows` is a `Collection`, its count gives progress an ETA, as a file's prescan does,
    ///   and with token authentication and no run topic (`defaults.topic`), a row with no topic
    ///   stops the run before anything is sent (``SetupError/input(_:)``, `emptyTopic`), as the
    ///   prescan would; that check iterates the collection once more. Any other sequence is read
    ///   once, like a stream: such a row is then `rejected` (`MissingTopic`).
    /// - `configuration.prescan` does not apply. `configuration.resume` is refused
    ///   (``SetupError/resumeNeedsFile``): a resume reads its input again. The output directory is
    ///   otherwise a campaign's like any other, and refused when it holds one already.
    /// - Throws: ``SetupError`` for problems found before anything is sent.
    public func run<Rows: Sequence<CampaignRow>>(rows: sending Rows) throws -> Result {
        var configuration = self.configuration
        guard !configuration.resume else { throw SetupError.resumeNeedsFile }
        configuration.inputPath = Self.rowsInputName
        configuration.rowsInMemory = true
        let claim: CampaignDirectory.Claim
        do { claim = try CampaignDirectory.check(configuration) } catch { throw SetupError.campaignDirectory(error) }
        var expectedRows = try Self.count(rows, requiringTopic: configuration.rowsNeedTopic)
        // A shard's share of the rows is known only once they are read.
        if configuration.shard != nil { expectedRows = nil }
        // A row from memory has the known columns only (and, with several credentials, the group ones).
        let header = CSVHeader(names: CSVColumn.allCases.map(\.headerName), columns: Set(CSVColumn.allCases))
        let template = try Self.bind(configuration.payloadTemplate, to: header, path: Self.rowsInputName)
        var columns = Self.groupColumns(configuration)
        columns.prescanCount = nil  // rows from memory are counted by the overload below, not a scan
        try Self.prepareGroups(&columns, rows: rows, configuration: configuration)
        return try send(RowSequenceSource(rows, columns: configuration.credentials.isEmpty ? nil : columns),
                        expectedRows: expectedRows, claim: claim, template: template, columns: columns)
    }

    /// With several credentials, as a file's prescan does: a collection's rows are routed first,
    /// counting each group's rows, and a row that needs an environment no endpoint serves stops the
    /// run before anything is sent. A sequence read once is refused, as a stream is, when a row
    /// might need such an environment: the run's own, or one a credential serves (any row may name it).
    private static func prepareGroups<Rows: Sequence<CampaignRow>>(_ columns: inout GroupColumns, rows: Rows,
                                                                   configuration: CampaignConfiguration) throws(SetupError) {
        guard !configuration.credentials.isEmpty else { return }
        guard rows is any Collection else {
            for environment in APNsEnvironment.allCases
                where (environment == configuration.environment
                       || configuration.credentials.contains { $0.environment == nil || $0.environment == environment })
                    && CredentialGroup.endpointIndices(configuration, serving: environment).isEmpty {
                throw SetupError.noEndpoint(environment: environment, rows: nil)
            }
            return
        }
        let router = CredentialRouter(configuration: configuration)
        var counts = [Int](repeating: 0, count: CredentialGroup.layout(of: configuration).count)
        var missing: [APNsEnvironment: Int] = [:]
        for row in rows {
            let topic = row.topic.flatMap { $0.isEmpty ? nil : $0 } ?? configuration.defaults.topic
            switch router.route(environment: row.environment.map { Array($0.utf8)[...] }, keyID: row.keyID.map { Array($0.utf8)[...] },
                                topic: topic) {
            case .group(let group): counts[group] += 1
            case .noEndpoint(let environment): missing[environment, default: 0] += 1
            case .rejected, .keyElsewhere: break
            }
        }
        if let (environment, count) = missing.min(by: { $0.key < $1.key }) { throw SetupError.noEndpoint(environment: environment, rows: count) }
        columns.rows = counts
    }

    /// A collection's row count, and its first row without a topic when every row needs one
    /// (the prescan's check); nil for a sequence that can be read only once.
    private static func count<Rows: Sequence<CampaignRow>>(_ rows: Rows, requiringTopic: Bool) throws -> Int? {
        guard let collection = rows as? any Collection else { return nil }
        guard requiringTopic else { return collection.count }
        var count = 0
        for row in rows {
            count += 1
            if row.topic?.isEmpty ?? true { throw SetupError.input(.emptyTopic(path: rowsInputName, row: count)) }
        }
        return count
    }
}
