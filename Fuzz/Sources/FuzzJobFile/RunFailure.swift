/// The apns-bulk command's error type (APNsBulk.swift), which JobFile.swift throws: the same shape,
/// without the rest of the command line.
struct RunFailure: Error {
    var message: String
    var status: Int32

    static func usage(_ message: String) -> RunFailure { RunFailure(message: message, status: 1) }
}
