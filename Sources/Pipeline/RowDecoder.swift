import APNs

/// Turns a CSV row into a notification to send, or into a `rejected` record naming what is wrong
/// with the row. A bad row never stops the run.
struct RowDecoder: Sendable {
    let defaults: HeaderValues
    let defaultPayload: [UInt8]?
    let auth: AuthKind

    enum Decoded {
        case send(Job)
        case rejected(ResultRecord)
    }

    func decode(_ row: CSVRow) -> Decoded {
        let tokenText = row.string(.deviceToken) ?? ""
        if let problem = row.problem {
            return .rejected(ResultRecord(row: row.number, deviceToken: tokenText, outcome: .rejected,
                                          reason: problem.reason))
        }
        var payload: [UInt8]
        if let field = row.field(.payload), !field.isEmpty {
            payload = Array(field)
        } else if let defaultPayload {
            payload = defaultPayload
        } else {
            payload = []
        }
        let headers = HeaderValues(topic: text(row, .topic) ?? defaults.topic,
                                   pushType: text(row, .pushType) ?? defaults.pushType,
                                   priority: text(row, .priority) ?? defaults.priority,
                                   expiration: text(row, .expiration) ?? defaults.expiration,
                                   collapseID: text(row, .collapseID) ?? defaults.collapseID,
                                   apnsID: text(row, .apnsID) ?? defaults.apnsID)
        do {
            let notification = try Notification(deviceTokenHex: tokenText, payload: payload, headers: headers,
                                                 auth: auth)
            return .send(Job(row: row.number, deviceTokenText: tokenText, notification: notification))
        } catch {
            return .rejected(ResultRecord(row: row.number, deviceToken: tokenText, outcome: .rejected,
                                          reason: error.reason.name))
        }
    }

    /// A row's own value for a column, or nil when the column is absent or the field empty (so the
    /// run-level default applies).
    private func text(_ row: CSVRow, _ column: CSVColumn) -> String? {
        guard let field = row.field(column), !field.isEmpty else { return nil }
        return String(decoding: field, as: UTF8.self)
    }
}
