// swift-tools-version: 6.0
import PackageDescription

// A package that uses apns-bulk the way any other would: by URL and version. Yours names
// apns-bulk's repository; this one defaults to the tagged clone of the working tree that
// ../run.sh (`make test`) makes, and APNS_BULK_URL overrides it.
let apnsBulkURL = Context.environment["APNS_BULK_URL"]
    ?? "file://\(Context.packageDirectory)/../../.build/example-origin/apns-bulk"

let package = Package(
    name: "EmbeddedCampaign",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: apnsBulkURL, from: "0.1.0"),
    ],
    targets: [
        .executableTarget(name: "EmbeddedCampaign", dependencies: [
            .product(name: "APNs", package: "apns-bulk"),
            .product(name: "Transport", package: "apns-bulk"),
            .product(name: "Pipeline", package: "apns-bulk"),
            .product(name: "Report", package: "apns-bulk"),
            .product(name: "MockAPNs", package: "apns-bulk"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
