import ArgumentParser
import Glibc
import MockAPNs

/// `apns-bulk mock-server`: an APNs emulator for rehearsals, tests and benchmarks. Prints
/// `listening HOST:PORT` once it accepts connections; SIGINT/SIGTERM stop it cleanly (stats and
/// record files written).
struct MockServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock-server",
        abstract: "Run a mock APNs server that validates requests as APNs does and injects faults on demand.",
        discussion: "Prints `listening HOST:PORT` on stdout once it accepts connections. Stop it with SIGINT or SIGTERM."
    )

    @OptionGroup var options: MockServerOptions

    func run() throws {
        let configuration = try options.configuration()
        let stopSignal = try StopSignal.install()
        let server: MockAPNsServer
        do {
            server = try MockAPNsServer.start(configuration)
        } catch {
            throw RunFailure.usage(error.description)
        }
        // Straight to the descriptor, unbuffered: tests and benchmarks wait for this line.
        let line = Array("listening \(server.address)\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        stopSignal.wait()
        do {
            try server.stop()
        } catch {
            throw RunFailure(message: error.description, status: 2)
        }
    }
}

/// SIGINT and SIGTERM, turned into a byte on a pipe: the handler only writes (async-signal-safe);
/// the main thread waits on the pipe and does the stopping.
struct StopSignal {
    nonisolated(unsafe) private static var writeFD: Int32 = -1
    private let readFD: Int32

    static func install() throws -> StopSignal {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw RunFailure.usage("cannot create a pipe for signal handling: errno \(errno)") }
        writeFD = fds[1]
        // A parent may have left them blocked (Foundation's Process does): unblock them here, before
        // any thread starts, so every thread inherits the open mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(StopSignal.writeFD, &byte, 1)
            }
        }
        return StopSignal(readFD: fds[0])
    }

    /// Blocks until a stop signal arrived.
    func wait() {
        var byte: UInt8 = 0
        while true {
            let count = read(readFD, &byte, 1)
            if count == 1 || (count < 0 && errno != EINTR) || count == 0 { return }
        }
    }
}
