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
        discussion: "Prints `listening HOST:PORT` on stdout once it accepts connections, then `management listening HOST:PORT` for --management-listen, `binary listening HOST:PORT` and `feedback listening HOST:PORT` for the retired protocols' listeners when asked for. Stop it with SIGINT or SIGTERM."
    )

    @OptionGroup var options: MockServerOptions

    func run() throws {
        let configuration = try options.configuration()
        let legacyConfiguration = try options.legacyConfiguration()
        let stopSignals = try StopSignals.install()
        let server: MockAPNsServer
        do {
            server = try MockAPNsServer.start(configuration)
        } catch {
            throw RunFailure.usage(error.description)
        }
        var legacy: MockLegacyServers?
        if legacyConfiguration.isEnabled {
            do {
                legacy = try MockLegacyServers.start(legacyConfiguration, mock: configuration,
                                                     authority: server.certificateAuthority)
            } catch {
                _ = try? server.stop()
                throw RunFailure.usage(error.description)
            }
        }
        // Straight to the descriptor, unbuffered: tests and benchmarks wait for these lines, the
        // HTTP/2 one first.
        var text = "listening \(server.address)\n"
        if let address = server.managementAddress { text += "management listening \(address)\n" }
        if let address = legacy?.binaryAddress { text += "binary listening \(address)\n" }
        if let address = legacy?.feedbackAddress { text += "feedback listening \(address)\n" }
        let line = Array(text.utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        stopSignals.wait()
        do {
            try legacy?.stop()
            try server.stop()
        } catch {
            throw RunFailure(message: error.description, status: 2)
        }
    }
}
