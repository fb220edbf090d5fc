import Foundation

/// A fresh directory under the system's temporary directory for one test, removed with everything
/// in it when the value goes away.
public final class TemporaryDirectory {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apns-bulk-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The directory itself.
    public var path: String { url.path }

    /// The path of `name` inside the directory (which need not exist yet).
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    @discardableResult
    public func write(_ name: String, bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    public func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url.appendingPathComponent(name))) }

    /// A fresh P-256 key in PKCS#8 PEM, as Apple's .p8 files hold, made by the openssl tool.
    @discardableResult
    public func signingKey(_ name: String = "key.p8") throws -> String {
        let file = path(name)
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", file])
        return file
    }
}
