import Foundation
import Testing
import TestSupport

/// The built binary run under libfaketime, its wall clock moved by `offset` ("-65m", "-3d") and
/// its monotonic clock left true.
enum FakeTime {
    static let path = "/usr/bin/faketime"

    static func run(offset: String, _ arguments: [String]) throws -> Binary.Result {
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
        return try Command.run(path, ["-f", offset, Binary.url.path] + arguments, environment: environment)
    }
}
