import APNs
import ArgumentParser
import Foundation
import Transport

/// The one credential of a command that acts for one app (`channels`, `broadcast`): send's
/// credential flags, one key or one certificate, read by send's code (`SendCredentials`).
struct AppCredentialFlags: ParsableArguments, CredentialFlags {
    @Option(name: .customLong("key-file"), help: "Token auth: the .p8 signing key. Default: none; give a key or a certificate, or --endpoint mock alone.")
    var keyFile: [String] = []
    @Option(name: .customLong("key-id"), help: "Token auth: the key's 10-character Key ID. Default: the one in the file's name AuthKey_<KEYID>.p8.")
    var keyID: String?
    @Option(name: .customLong("team-id"), help: "Token auth: the 10-character Team ID. Default: none.")
    var teamID: String?
    @Option(name: .customLong("cert-file"), help: "Certificate auth: the client certificate (PEM), with --cert-key-file. Default: none.")
    var certFile: [String] = []
    @Option(name: .customLong("cert-key-file"), help: "Certificate auth: the certificate's private key (PEM). Default: none.")
    var certKeyFile: [String] = []
    @Option(name: .customLong("p12-file"), help: "Certificate auth: a .p12 holding certificate and key. Default: none.")
    var p12File: [String] = []
    @Option(name: .customLong("p12-password-env"), help: "The environment variable holding the --p12-file's password. Default: none, for a .p12 without a password.")
    var p12PasswordEnv: String?

    /// These commands read keys from the command line only.
    var keysFile: String? { nil }
    var config: String? { nil }

    /// The app's one credential, checked for `environment` (a certificate that serves only the
    /// other refuses), with `--ca-file` checked beside it; `what` names the command's objects in
    /// messages ("channels", "a broadcast").
    func load(usesMock: Bool, environment: APNsEnvironment, caFile: String?, what: String) throws -> SendCredentials {
        let credentials = try SendCredentials.load(self, onlyMock: usesMock)
        guard credentials.count == 1 else {
            throw RunFailure.usage("\(what) take one credential, the app's: give one --key-file, or one --cert-file with "
                                   + "its --cert-key-file, or one --p12-file")
        }
        if let certificate = credentials.certificates.first, let served = certificate.environment, served != environment {
            throw RunFailure.usage("the certificate \(certificate.file) serves \(served.rawValue) only, and these are "
                                   + "\(environment.rawValue)'s channels: add --environment \(served.rawValue), or use the "
                                   + "app's \(environment.rawValue) certificate")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw RunFailure.usage("--ca-file \(caFile): cannot read it; give a PEM file of CA certificates")
        }
        if usesMock && caFile != nil {
            throw RunFailure.usage("--ca-file cannot be combined with --endpoint mock (the mock brings its own CA)")
        }
        return credentials
    }
}

extension SendCredentials {
    /// The client TLS context of a command that acts for one app: the system's trust plus
    /// `caFile`, and the credential's certificate when it is one.
    func clientTLS(caFile: String?) throws -> TLSContext {
        do {
            return try TLSContext.client(additionalTrust: caFile.map { .caFile($0) },
                                         identity: certificates.first?.identity, offersH2: true)
        } catch {
            throw RunFailure.usage("TLS setup: \(error)")
        }
    }

    /// The CONNECT proxy for `endpoint`: `--proxy`, else the environment's (https_proxy, no_proxy).
    static func proxy(flag: String?, for endpoint: Endpoint) throws -> HTTPProxy? {
        do {
            return try ProxySettings(proxyFlag: flag, noProxyFlag: nil,
                                     environment: ProcessInfo.processInfo.environment).proxy(for: endpoint)
        } catch {
            throw RunFailure.usage(error.description)
        }
    }
}
