import Foundation
import Glibc

/// SIGINT and SIGTERM for both long-running commands: `mock-server` blocks in `wait()` until one
/// arrives, `send` hands each one to its campaign with `forward(to:)`.
///
/// The handler only writes the signal's number to a pipe (async-signal-safe, and it runs on
/// whichever thread the kernel picks); a thread of ours reads the pipe and does the stopping.
/// Install it once per process, before the threads that should not see the signals start.
final class StopSignals: Sendable {
    /// The pipe's write end, read by the handler (a C function: no context pointer).
    nonisolated(unsafe) private static var writeFD: Int32 = -1
    private let readFD: Int32
    /// Written instead of a signal number to end `forward(to:)`'s thread.
    private static let cancelByte: UInt8 = 0

    private init(readFD: Int32) {
        self.readFD = readFD
    }

    static func install() throws -> StopSignals {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw RunFailure.usage("cannot create a pipe for signal handling: errno \(errno)")
        }
        // A full pipe must not block the handler: signals beyond 64 KiB of unread ones are dropped.
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        writeFD = fds[1]
        // A parent may have left them blocked (Foundation's Process does): unblock them here, so
        // this thread and every thread started from now on can take them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(StopSignals.writeFD, &byte, 1)
            }
        }
        return StopSignals(readFD: fds[0])
    }

    /// Blocks until a stop signal arrives (or `cancel()` is called) and returns its number (0 after
    /// `cancel()` or when the pipe fails).
    @discardableResult
    func wait() -> Int32 {
        var byte: UInt8 = 0
        while true {
            let count = read(readFD, &byte, 1)
            if count == 1 { return Int32(byte) }
            if count == 0 || (count < 0 && errno != EINTR) { return 0 }
        }
    }

    /// Calls `handler` on a thread of its own for every stop signal until `cancel()`.
    func forward(to handler: @escaping @Sendable (Int32) -> Void) {
        Thread.detachNewThread { [self] in
            while true {
                let number = wait()
                if number == 0 { return }
                handler(number)
            }
        }
    }

    /// Ends `forward(to:)`'s thread. Signals that arrive later are written to the pipe and ignored.
    func cancel() {
        var byte = Self.cancelByte
        _ = write(Self.writeFD, &byte, 1)
    }
}
