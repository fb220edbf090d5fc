// swift-tools-version: 6.0
import PackageDescription

// Layout and dependency direction (docs/ARCHITECTURE.md):
// apns-bulk → Report → Pipeline, MockAPNs → Transport, ZstdFile, APNs → ByteScan → C modules.
// No target carries unsafe build flags: SwiftPM refuses those in a package that another one
// depends on by version, and this package's six libraries are meant to be depended on. The
// release speed they bought comes instead from `@exclusivity(unchecked)` on the stored properties
// the per-row path touches (each owned by one thread: a reactor's, the reader's or the writer's,
// or read under a lock); without it `send` ran 10 % more instructions per row.

let package = Package(
    name: "apns-bulk",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apns-bulk", targets: ["apns-bulk"]),
        // Its types (`InlineText`, `UUIDBytes`) appear in Transport's and Pipeline's answers.
        .library(name: "ByteScan", targets: ["ByteScan"]),
        .library(name: "APNs", targets: ["APNs"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .library(name: "Report", targets: ["Report"]),
        .library(name: "MockAPNs", targets: ["MockAPNs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd",
                       providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CCSV", providers: [.apt(["libcsv-dev"])]),
        // The three databases `cleanup` writes to, each through its own C client library.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMariaDB", pkgConfig: "libmariadb", providers: [.apt(["libmariadb-dev"])]),
        // epoll, eventfd and prctl, which Swift's Glibc module leaves out (libc: nothing to link).
        .systemLibrary(name: "CLinux"),

        // The byte-level pieces APNs, Transport and Pipeline share: 16-byte tests (SSE2, SWAR), short
        // text and UUIDs held inline, a cache prefetch and atomic bits in a shared mapping.
        .target(name: "ByteScan", dependencies: ["CLinux"]),
        .target(name: "APNs", dependencies: ["ByteScan", "COpenSSL"]),
        .target(name: "Transport", dependencies: ["ByteScan", "CNGHTTP2", "COpenSSL", "CLinux"]),
        // The zstd file reader and writer, shared by Pipeline's files and MockAPNs' record file.
        .target(name: "ZstdFile", dependencies: ["CZstd"]),
        .target(name: "Pipeline", dependencies: [
            "ByteScan", "APNs", "Transport", "ZstdFile", "CCSV",
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ]),
        // What renders or exports a run's aggregates (report.html, the timeline sidecar, the
        // Prometheus metrics), attached to a campaign through Pipeline's `CampaignExporter`:
        // Pipeline does not import it.
        .target(name: "Report", dependencies: ["APNs", "Pipeline", "ZstdFile"]),
        .target(name: "MockAPNs", dependencies: ["ByteScan", "APNs", "Transport", "ZstdFile"]),
        // `cleanup`: the dead-token list applied to the app's database (PostgreSQL, SQLite,
        // MariaDB/MySQL). Only the command links it, so a library user of Pipeline needs no libpq.
        .target(name: "Cleanup", dependencies: ["CLibPQ", "CSQLite", "CMariaDB"]),
        .executableTarget(name: "apns-bulk", dependencies: [
            "APNs", "Transport", "Pipeline", "Report", "MockAPNs", "Cleanup",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // What the test targets share: starting processes, temporary directories, keys and certificates
        // made with the openssl tool, loopback ports, the zstd CLI, Pushgateway, test time. Foundation only,
        // so EndToEndTests still imports none of the package's modules.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "CLibrariesTests", dependencies: ["CNGHTTP2", "COpenSSL", "CZstd", "CCSV", "CLinux", "TestSupport"]),
        .testTarget(name: "ByteScanTests", dependencies: ["ByteScan", "TestSupport"]),
        .testTarget(name: "APNsTests", dependencies: ["APNs", "ByteScan", "COpenSSL", "TestSupport"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport", "ByteScan", "CNGHTTP2", "COpenSSL", "TestSupport"]),
        // A campaign run in this process against in-process mocks, for PipelineTests and ReportTests.
        .target(name: "CampaignTestSupport", dependencies: ["Pipeline", "APNs", "Transport", "MockAPNs", "TestSupport"],
                path: "Tests/CampaignTestSupport"),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "ByteScan", "APNs", "Transport", "MockAPNs", "TestSupport",
                                                          "CampaignTestSupport"]),
        .testTarget(name: "ReportTests", dependencies: ["Report", "Pipeline", "APNs", "Transport", "MockAPNs", "ZstdFile",
                                                        "TestSupport", "CampaignTestSupport"]),
        // Against real servers the tests start on 127.0.0.1 (PostgreSQL, MariaDB) and SQLite files.
        .testTarget(name: "CleanupTests", dependencies: ["Cleanup", "TestSupport"]),
        .testTarget(name: "MockAPNsTests", dependencies: ["MockAPNs", "Transport", "APNs", "TestSupport"]),
        // The command's own code (the job file and its TOML reader), through `@testable import`.
        .testTarget(name: "CommandTests", dependencies: ["apns-bulk", "TestSupport"]),
        // Runs the built binary (`swift build` first): it imports none of the package's modules.
        // Golden/ holds the golden test's input and expected files, read from the source tree.
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"], exclude: ["Golden"]),
    ],
    swiftLanguageModes: [.v6]
)
