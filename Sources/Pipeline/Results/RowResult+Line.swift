import ZstdFile

/// A row's record as its line of results.jsonl.zst: its fields lent to `ResultLineEncoder` as a
/// `ResultLine`.
extension RowResult {
    /// Appends the record's line (with its newline) to `line`.
    borrowing func appendJSONLine(to line: inout [UInt8]) {
        withLine(labels: nil) { ResultLineEncoder.append($0, to: &line) }
    }

    /// Writes the record's line straight into `writer`'s next frame, with the fields `labels` give
    /// its credential group (nil: none).
    borrowing func appendJSONLine(to writer: ZstdFrameWriter, labels: RecordLabels?) {
        withLine(labels: labels) { ResultLineEncoder.append($0, to: writer) }
    }

    /// The encoder's first pass alone (false, and nothing written, when some text needs escaping).
    borrowing func appendPlainJSONLine(to line: inout [UInt8]) -> Bool {
        withLine(labels: nil) { ResultLineEncoder.appendPlain($0, to: &line) }
    }

    /// The encoder's second pass alone: every text escaped.
    borrowing func appendEscapedJSONLine(to line: inout [UInt8]) {
        withLine(labels: nil) { ResultLineEncoder.appendEscaped($0, to: &line) }
    }

    /// Runs `body` with the record's line. The fields go to the text's borrowers as arguments: a
    /// closure that read `self` would capture, and so copy, the whole record.
    borrowing func withLine<Result>(labels: RecordLabels?, _ body: (ResultLine) -> Result) -> Result {
        let numbers = ResultLine(row: row, outcome: outcome, status: status, attempts: attempts,
                                 unregisteredAt: unregisteredAt, latencyMs: latencyMs,
                                 retriedAfterConnectionLoss: retriedAfterConnectionLoss, duplicateOf: duplicateOf,
                                 uniqueID: uniqueID)
        return Self.withLine(numbers, token: deviceToken, reason: reason, endpoint: endpoint, apnsID: apnsID,
                             labels: labels, lane: lane, environmentCode: environmentCode, fallbackFrom: fallbackFrom,
                             body)
    }

    private static func withLine<Result>(_ numbers: ResultLine, token: borrowing ArraySlice<UInt8>,
                                         reason: borrowing String?, endpoint: borrowing String?,
                                         apnsID: borrowing APNsID, labels: RecordLabels?, lane: UInt16,
                                         environmentCode: UInt8, fallbackFrom: UInt8,
                                         _ body: (ResultLine) -> Result) -> Result {
        token.withUnsafeBufferPointer { token in
            ResultLine.withUTF8(of: reason, endpoint) { reason, endpoint in
                apnsID.withBytes { apnsID in
                    RecordLabels.withFields(of: labels, lane: lane, environmentCode: environmentCode,
                                            fallbackFrom: fallbackFrom) { fields in
                        var line = numbers
                        line.token = token
                        line.reason = reason
                        line.endpoint = endpoint
                        line.apnsID = apnsID
                        line.labels = fields
                        return body(line)
                    }
                }
            }
        }
    }
}
