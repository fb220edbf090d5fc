import APNs
import FuzzSupport
@testable import Pipeline

/// The campaign CSV (plain or zstd, told by its magic number) through the prescan, the reader in
/// two chunk sizes and the row decoder. Besides not crashing, the reader must promise what the
/// run relies on: the rows and their fields do not depend on where a read chunk ends, and a file
/// the prescan accepted is read to its end with exactly the rows the prescan counted (the prescan
/// is what stops a bad file before anything is sent).
///
/// A damaged `.csv.zst` is the exception to the first property: only its failing is required.
///
/// Input: one byte (bits 0–5: the small chunk size − 1; bit 6: token auth requires a topic
/// column; bit 7: a default payload), then the file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzFile.removeAtExit()
    var input = FuzzInput(data, size)
    let selector = input.byte()
    let smallChunk = Int(selector & 0x3f) + 1
    let requiresTopic = selector & 0x40 != 0
    let defaultPayload: [UInt8]? = selector & 0x80 != 0 ? Array(#"{"aps":{"alert":"hi"}}"#.utf8) : nil
    let path = FuzzFile.write(input.rest())

    let prescan = Result { () throws(InputFileError) in try Prescan.run(path: path, requiresTopic: requiresTopic) }
    let small = read(path, chunkSize: smallChunk, requiresTopic: requiresTopic, defaultPayload: defaultPayload)
    let large = read(path, chunkSize: 256 * 1024, requiresTopic: requiresTopic, defaultPayload: defaultPayload)

    if small.endsInZstdError || large.endsInZstdError {
        // zstd hands out a frame's data before its checksum is checked: what was parsed before a
        // frame turned out corrupt or cut depends on the read size. Both must fail, though.
        fuzzCheck(small.error != nil && large.error != nil,
                  "a damaged .zst read to its end: \(smallChunk) bytes gave \(small), 256 KiB gave \(large)")
    } else {
        fuzzCheck(small == large,
                  "rows depend on the chunk size: \(smallChunk) bytes gave \(small), 256 KiB gave \(large)")
    }
    if case .success(let counted) = prescan {
        // The prescan judges the CSV's structure only (as CSVRecordCounter, its differential twin,
        // does); a header name that is not UTF-8 is refused when the reader opens the file, still
        // before anything is sent.
        if case .openFailed(.headerNotUTF8) = large { return 0 }
        guard case .rows(let rows, nil) = large else {
            fuzzCheck(false, "the prescan accepted the file (\(counted.rows) rows) but reading it gave \(large)")
            return 0
        }
        fuzzCheck(rows.count == counted.rows, "the prescan counted \(counted.rows) rows, the reader read \(rows.count)")
        fuzzCheck(rows.map(\.number) == (0..<rows.count).map { $0 + 1 },
                  "row numbers are not 1...\(rows.count): \(rows.map(\.number).prefix(20))")
    }
    return 0
}

/// What a read gave: every row, then the error that ended it (nil at the end of the file).
enum ReadResult: Equatable, CustomStringConvertible {
    case openFailed(InputFileError)
    case rows([RowSummary], InputFileError?)

    var error: InputFileError? {
        switch self {
        case .openFailed(let error): error
        case .rows(_, let error): error
        }
    }

    var endsInZstdError: Bool {
        switch error {
        case .corruptZstd, .truncatedZstd: true
        default: false
        }
    }

    var description: String {
        switch self {
        case .openFailed(let error): "open failed: \(error)"
        case .rows(let rows, let error): "\(rows.count) rows, then \(error.map { "\($0)" } ?? "the end")"
        }
    }
}

struct RowSummary: Equatable {
    var number: Int
    var problem: CSVRowProblem?
    var fields: [[UInt8]?]
    var tokenVerdict: String
    var certificateVerdict: String
}

func read(_ path: String, chunkSize: Int, requiresTopic: Bool, defaultPayload: [UInt8]?) -> ReadResult {
    let source: CSVSource
    do {
        source = try CSVSource(path: path, chunkSize: chunkSize, requiresTopic: requiresTopic)
    } catch {
        return .openFailed(error)
    }
    let defaults = HeaderValues(topic: requiresTopic ? nil : "com.example.app")
    let token = RowDecoder(defaults: defaults, defaultPayload: defaultPayload, auth: .token)
    let certificate = RowDecoder(defaults: defaults, defaultPayload: defaultPayload, auth: .certificate)
    var rows: [RowSummary] = []
    do {
        while let batch = try source.nextBatch() {
            for index in batch.indices {
                let row = batch[index]
                rows.append(RowSummary(number: row.number, problem: row.problem,
                                       fields: CSVColumn.allCases.map { row.field($0).map(Array.init) },
                                       tokenVerdict: verdict(token.decode(batch, at: index)),
                                       certificateVerdict: verdict(certificate.decode(batch, at: index))))
            }
        }
    } catch {
        return .rows(rows, error)
    }
    return .rows(rows, nil)
}

func verdict(_ decoded: RowDecoder.Decoded) -> String {
    switch decoded {
    case .send(let job): "send \(job.deviceToken.count)-byte token, \(job.payload(runPayload: []).count)-byte payload"
    case .rejected(let reason): "rejected: \(reason)"
    case .breaksLiveActivityRule(let rule): "rejected: InvalidPayload (\(rule))"
    }
}
