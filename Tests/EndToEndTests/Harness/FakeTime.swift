import Foundation
import Testing
import TestSupport

/// The built binary run under libfaketime, its wall clock moved by `offset` ("-65m", "-3d") and
/// its monotonic clock left true.
enum FakeTime {
    static let path = "/usr/bin/faketime"

    /// `offset` is libfaketime's: "-65m" moves the clock, "@2026-01-01 00:00:00" starts it there.
    /// With `directory`, the binary runs with that working directory.
    static func run(offset: String, _ arguments: [String], in directory: String? = nil) throws -> Binary.Result {
        try #require(FileManager.default.isExecutableFile(atPath: path), "faketime is missing: make test installs it")
        var environment = ProcessInfo.processInfo.environment
        environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        // A sanitized build's allocator reads the clock while it holds its lock (its release-to-OS
        // timer); libfaketime's first clock_gettime initializes itself through dlsym, which
        // allocates: a deadlock (seen with ASan and TSan). Without that timer the allocator reads
        // no clock there; a plain build ignores the options.
        for name in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
            environment[name] = [environment[name], "allocator_release_to_os_interval_ms=-1"].compactMap { $0 }.joined(separator: ":")
        }
        let command = [path, "-f", offset, Binary.url.path] + arguments
        guard let directory else { return try Command.run(command[0], Array(command.dropFirst()), environment: environment) }
        return try Command.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory] + command,
                               environment: environment)
    }
}
