import FuzzSupport

/// The job file of `send --config`: TOML read by the command's own `TOMLReader` and expanded into
/// `send`'s arguments by its `JobFile` (both symlinked into this target). Besides not crashing:
/// a table the reader returns, written back as TOML (`TOMLWriter`), reads again to the same
/// table; and the expansion keeps the command line's own arguments, after the ones it generates.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJobFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let text = String(validating: bytes, as: UTF8.self), let table = try? TOMLReader.read(text) {
        let written = TOMLWriter.document(table)
        do {
            let again = TOMLWriter.document(try TOMLReader.read(written))
            fuzzCheck(again == written, "read back differently:\n\(written)\nthen\n\(again)")
        } catch {
            fuzzCheck(false, "its own table written back is refused: \(error)\n\(written)")
        }
    }
    FuzzFile.removeAtExit()
    let path = FuzzFile.write(bytes)
    let given = ["send", "--config", path, "--input", "c.csv"]
    guard let expanded = try? JobFile.expand(given) else { return 0 }
    fuzzCheck(expanded.first == "send" && Array(expanded.suffix(given.count - 1)) == Array(given.dropFirst()),
              "the command line's arguments did not survive: \(expanded)")
    return 0
}
