// swift-tools-version: 6.0
import PackageDescription

// Layout and dependency direction are fixed by DESIGN.md:
// apns-bulk → Pipeline, MockAPNs → Transport, APNs → C modules.
// Release builds of our own modules skip the run-time exclusivity checks (debug builds and the
// tests keep them): on the per-row path they cost about 4 % of `send`'s CPU (benchmarks/RESULTS.md).
let hotPath: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "apns-bulk",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "apns-bulk", targets: ["apns-bulk"]),
        .library(name: "APNs", targets: ["APNs"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .library(name: "MockAPNs", targets: ["MockAPNs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd",
                       providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CCSV", providers: [.apt(["libcsv-dev"])]),

        .target(name: "APNs", dependencies: ["COpenSSL"], swiftSettings: hotPath),
        .target(name: "Transport", dependencies: ["APNs", "CNGHTTP2", "COpenSSL", "CZstd"], swiftSettings: hotPath),
        .target(name: "Pipeline", dependencies: [
            "APNs", "Transport", "CCSV", "CZstd",
            .product(name: "Histogram", package: "hdrhistogram-swift"),
        ], swiftSettings: hotPath),
        .target(name: "MockAPNs", dependencies: ["APNs", "Transport"], swiftSettings: hotPath),
        .executableTarget(name: "apns-bulk", dependencies: [
            "APNs", "Transport", "Pipeline", "MockAPNs",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "TOMLKit", package: "TOMLKit"),
        ], swiftSettings: hotPath),

        .testTarget(name: "CLibrariesTests", dependencies: ["CNGHTTP2", "COpenSSL", "CZstd", "CCSV"]),
        .testTarget(name: "APNsTests", dependencies: ["APNs", "COpenSSL"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport", "APNs", "CNGHTTP2", "COpenSSL", "CZstd"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "APNs", "Transport", "CZstd", "MockAPNs"]),
        .testTarget(name: "MockAPNsTests", dependencies: ["MockAPNs", "Transport", "APNs"]),
        .testTarget(name: "EndToEndTests", dependencies: ["APNs", "CZstd"]),
    ],
    swiftLanguageModes: [.v6]
)
