import Foundation

/// The repository the tests were built from, for tests that read its files (job files, manifests,
/// the reason tables): found from the calling test's own source path, whatever folder it sits in.
public enum SourceTree {
    /// The directory holding Package.swift above `file` (the caller's #filePath by default).
    public static func root(_ file: String = #filePath) -> URL {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) { return directory }
            directory.deleteLastPathComponent()
        }
        preconditionFailure("no Package.swift above \(file)")
    }
}
