// swift-tools-version: 6.0
import PackageDescription

// libFuzzer targets for apns-bulk's parsers of untrusted input (`make fuzz`; see Fuzz/README.md).
// A package of its own, so the main package carries no fuzzer target and no unsafe flag: the
// instrumentation comes from the command line (`--sanitize=fuzzer --sanitize=address` links
// libFuzzer; `-Xswiftc -sanitize=fuzzer,address` instruments the Swift code, which SwiftPM's
// `--sanitize=fuzzer` alone does not). `apns-bulk` is a symlink to `..`: a path dependency's
// identity is its directory's name, and a checkout may be named anything (even `fuzz`).
let package = Package(
    name: "apns-bulk-fuzz",
    dependencies: [
        .package(path: "apns-bulk"),
    ],
    targets: [
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzCSV", dependencies: [
            "FuzzSupport", .product(name: "Pipeline", package: "apns-bulk"), .product(name: "APNs", package: "apns-bulk"),
        ]),
        // CSVParseTranscript.swift is PipelineTests' own file (symlinked in): the differential test
        // and this fuzzer compare the fast path with libcsv the same way.
        .executableTarget(name: "FuzzCSVFast", dependencies: [
            "FuzzSupport", .product(name: "Pipeline", package: "apns-bulk"), .product(name: "ByteScan", package: "apns-bulk"),
        ]),
        .executableTarget(name: "FuzzJSON", dependencies: [
            "FuzzSupport", .product(name: "APNs", package: "apns-bulk"), .product(name: "ByteScan", package: "apns-bulk"),
        ]),
        .executableTarget(name: "FuzzResponse", dependencies: [
            "FuzzSupport", .product(name: "APNs", package: "apns-bulk"), .product(name: "Transport", package: "apns-bulk"),
            .product(name: "Pipeline", package: "apns-bulk"),
        ]),
        .executableTarget(name: "FuzzKeys", dependencies: [
            "FuzzSupport", .product(name: "APNs", package: "apns-bulk"), .product(name: "Transport", package: "apns-bulk"),
        ]),
        // JobFile*.swift and TOML*.swift are the apns-bulk command's own files (symlinked in): an
        // executable's code cannot be imported, and the job file belongs with the command line it
        // expands into.
        .executableTarget(name: "FuzzJobFile", dependencies: ["FuzzSupport"]),
        .executableTarget(name: "FuzzMockRequest", dependencies: [
            "FuzzSupport", .product(name: "MockAPNs", package: "apns-bulk"), .product(name: "APNs", package: "apns-bulk"),
            .product(name: "Transport", package: "apns-bulk"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
