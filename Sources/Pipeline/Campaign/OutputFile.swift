#if canImport(Glibc)
import Glibc
#endif

/// The one way a campaign creates its directory and its small files (summary.json,
/// campaign.json). Foundation's writers ask for mode 0666 where the streamed files
/// (results.jsonl.zst, dead-tokens.csv, sent-rows) ask for 0644, so under umask 000 one file
/// of a campaign was writable by everyone; and Foundation's errors reach the user as
/// "NSCocoaErrorDomain error 512". Here every file is 0644 less the umask, and every error is
/// the system's, with the path it is about.
package enum OutputFile {
    /// What every output file is created with; the umask can only take bits away.
    static let mode: mode_t = 0o644

    /// Writes `bytes` to `path`, replacing it. `atomically` writes a temporary file beside it and
    /// renames it over `path`, so a crash leaves the old file or the new one, never half of one.
    package static func write(_ bytes: [UInt8], to path: String, atomically: Bool = false) throws(OutputFileError) {
        let target = atomically ? path + ".tmp" : path
        let descriptor = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw OutputFileError(path: target, errno: errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let code = errno
                _ = close(descriptor)
                throw OutputFileError(path: target, errno: code)
            }
            offset += written
        }
        if close(descriptor) != 0 { throw OutputFileError(path: target, errno: errno) }
        if atomically && rename(target, path) != 0 { throw OutputFileError(path: path, errno: errno) }
    }

    /// Creates `path` and its missing parents (mode 0777 less the umask, as `mkdir -p`). When a
    /// component is a file, the error names that file rather than the directory asked for.
    static func createDirectory(_ path: String) throws(OutputFileError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            var info = stat()
            if stat(prefix, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else {
                    throw OutputFileError(path: path, errno: ENOTDIR, detail: "\(prefix) is a file, not a directory")
                }
            } else if mkdir(prefix, 0o777) != 0 {
                let code = errno
                if code != EEXIST {
                    throw OutputFileError(path: path, errno: code,
                                          detail: "cannot create \(prefix): \(String(cString: strerror(code)))")
                }
            }
            prefix += "/"
        }
    }
}
