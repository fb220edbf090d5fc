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
        let stopSignals = try StopSignals.install()
        let server: MockAPNsServer
        do {
            server = try MockAPNsServer.start(configuration)
        } catch {
            throw RunFailure.usage(error.description)
        }
        // Straight to the descriptor, unbuffered: tests and benchmarks wait for this line.
        let line = Array("listening \(server.address)\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        stopSignals.wait()
        do {
            try server.stop()
        } catch {
            throw RunFailure(message: error.description, status: 2)
        }
    }
}
