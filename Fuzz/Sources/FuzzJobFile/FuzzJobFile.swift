import FuzzSupport

/// The job file of `send --config`: TOML (TOMLKit over toml++) expanded into `send`'s arguments by
/// the command's own `JobFile.swift` (symlinked into this target). Besides not crashing: the
/// expansion keeps the command line's own arguments, after the ones it generates.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJobFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzFile.removeAtExit()
    let path = FuzzFile.write(UnsafeBufferPointer(start: data, count: size))
    let given = ["send", "--config", path, "--input", "c.csv"]
    guard let expanded = try? JobFile.expand(given) else { return 0 }
    fuzzCheck(expanded.first == "send" && Array(expanded.suffix(given.count - 1)) == Array(given.dropFirst()),
              "the command line's arguments did not survive: \(expanded)")
    return 0
}
