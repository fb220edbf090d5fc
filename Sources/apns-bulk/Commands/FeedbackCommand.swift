import ArgumentParser
import Foundation
import Pipeline
import Transport

/// `apns-bulk feedback`: reads Apple's retired feedback service (issue 15) into a dead-token list.
struct FeedbackCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Read the retired feedback service's dead tokens into a dead-tokens.csv.",
        usage: "apns-bulk feedback --out <out>\n"
            + "       --cert-file <cert-file> --cert-key-file <key-file>\n"
            + "       | --p12-file <p12-file>\n"
            + "       [--endpoint <endpoint>] [<options>]",
        discussion: """
            Connects with the client certificate, reads every tuple the service sends until it \
            closes, each the time APNs found the app gone and a device token, and writes them to \
            --out in dead-tokens.csv's columns: reason Unregistered, status empty, unregistered_at \
            from the tuple, row empty. An --out that exists is merged as `report` merges: one line \
            per token, the latest unregistered_at kept. A tuple cut off at the end is reported on \
            stderr and left out; the rest is written. Apple retired the feedback service in 2021: \
            use this against gateways and relays that still speak it.

            Exit status: 0 read and written; 1 bad flags or files; 2 the service could not be read.
            """
    )

    @Option(name: .customLong("endpoint"), help: "production, the default, is feedback.push.apple.com:2196; sandbox is feedback.sandbox.push.apple.com:2196; or HOST:PORT.")
    var endpointChoice: String?
    var endpoint: String { endpointChoice ?? "production" }
    @Option(name: .customLong("cert-file"), help: "The client certificate (PEM), with --cert-key-file; or give --p12-file instead.")
    var certFiles: [String] = []
    var certFile: String? { certFiles.last }
    @Option(name: .customLong("cert-key-file"), help: "The certificate's private key (PEM).")
    var certKeyFiles: [String] = []
    var certKeyFile: String? { certKeyFiles.last }
    @Option(name: .customLong("p12-file"), help: "A .p12 holding certificate and key, instead of --cert-file and --cert-key-file. Default: none.")
    var p12Files: [String] = []
    var p12File: String? { p12Files.last }
    @Option(name: .customLong("p12-password-env"), help: "The environment variable holding the .p12 password. Default: none, for a .p12 without a password.")
    var p12PasswordEnv: String?
    @Option(name: .customLong("ca-file"), help: "Also trust this CA (PEM) when verifying the server. Default: none; the system's trust store alone.")
    var caFile: String?
    @Option(help: "The dead-token list to write, or to merge into when it exists.")
    var out: String
    @Option(name: .customLong("timeout"), help: "Seconds to wait for the service to send everything and close. Default: 60.")
    var timeoutChoice: Double?
    var timeout: Double { timeoutChoice ?? 60 }

    func run() throws {
        let target: Endpoint
        switch endpoint {
        case "production": target = FeedbackService.production
        case "sandbox": target = FeedbackService.sandbox
        default:
            do { target = try Endpoint(parsing: endpoint) } catch {
                throw RunFailure.usage("--endpoint \(endpoint): \(error.reason); use production, sandbox or HOST:PORT")
            }
        }
        guard timeout > 0 else { throw RunFailure.usage("--timeout \(timeout): give a positive number of seconds") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw RunFailure.usage("--ca-file \(caFile): cannot read it; give a PEM file of CA certificates")
        }
        let tls: TLSContext
        do {
            tls = try TLSContext.client(additionalTrust: caFile.map { .caFile($0) }, identity: try identity(), offersH2: false)
        } catch let failure as RunFailure {
            throw failure
        } catch {
            throw RunFailure.usage("TLS setup: \(error)")
        }
        var merge: DeadTokenFileMerge
        do { merge = try DeadTokenFileMerge(existingPath: out) } catch {
            throw RunFailure.usage("--out \(error.description)")
        }
        let answer: FeedbackService.Answer
        do { answer = try FeedbackService.read(from: target, tls: tls, timeoutSeconds: timeout) } catch {
            throw RunFailure(message: "feedback: \(error.description); nothing was written", status: 2)
        }
        if answer.truncatedBytes > 0 {
            writeStandardError("warning: the feedback service's answer ended inside a tuple: the last \(answer.truncatedBytes) "
                               + "bytes were not a whole tuple and are left out; the \(answer.tuples.count) whole ones are written\n")
        }
        var added = 0
        for tuple in answer.tuples where merge.add(tuple) { added += 1 }
        do { try merge.write(to: out) } catch { throw RunFailure.usage("--out \(out): \(error.description)") }
        writeStandardOutput("feedback: \(answer.tuples.count) tuples from \(target), \(added) new tokens; "
                            + "\(out) lists \(merge.count) dead tokens\n")
    }

    /// The certificate Apple issued for the app: a PEM pair or a .p12.
    private func identity() throws -> TLSIdentity {
        let credentials: ClientCredentials
        if certFiles.count + p12Files.count > 1 || certKeyFiles.count > 1 {
            throw RunFailure.usage("feedback takes one certificate: the feedback service answers for the app its certificate names; run it once per certificate")
        }
        if let p12File {
            if certFile != nil || certKeyFile != nil {
                throw RunFailure.usage("give --cert-file/--cert-key-file or --p12-file, not both")
            }
            var password = ""
            if let variable = p12PasswordEnv {
                guard let value = ProcessInfo.processInfo.environment[variable] else {
                    throw RunFailure.usage("--p12-password-env \(variable): that environment variable is not set")
                }
                password = value
            }
            credentials = .pkcs12(file: p12File, password: password)
        } else {
            guard let certFile, let certKeyFile else {
                throw RunFailure.usage("the feedback service needs the app's client certificate: --cert-file C.pem --cert-key-file K.pem, or --p12-file F.p12")
            }
            credentials = .pem(certificateFile: certFile, keyFile: certKeyFile)
        }
        do { return try credentials.load() } catch { throw RunFailure.usage("client certificate: \(error)") }
    }
}
