#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock` on the `--out` directory for as long as a run uses it: two runs of one
/// campaign (a cron catch-up beside the nightly run, a retried pod beside a slow one) would both
/// send the rows not yet recorded and both append them, so the second is refused. The kernel
/// drops the lock when the process dies, so a crash never leaves it behind.
final class CampaignLock: @unchecked Sendable {
    // The descriptor is only closed, in deinit; nothing else touches it.
    private let descriptor: Int32

    /// Creates the directory when missing (an empty directory is no campaign) and locks it.
    init(directory: String) throws(CampaignDirectoryError) {
        do {
            try OutputFile.createDirectory(directory)
        } catch {
            throw .output(path: directory, detail: error.detail ?? String(cString: strerror(error.errno)))
        }
        descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .output(path: directory, detail: String(cString: strerror(errno))) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            _ = close(descriptor)
            if code == EWOULDBLOCK { throw .busy(directory: directory) }
            throw .output(path: directory, detail: "cannot lock it: \(String(cString: strerror(code)))")
        }
    }

    deinit { _ = close(descriptor) }
}
