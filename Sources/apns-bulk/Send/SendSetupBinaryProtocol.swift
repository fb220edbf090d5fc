import Pipeline
import Transport

/// `send`'s setup for `--protocol binary`: Apple's binary gateways, and what that protocol refuses.
extension SendSetup {
    /// Apple's binary gateways (issue 15): `production` and `sandbox` with `--protocol binary`.
    static let binaryGateways = ["production": Endpoint(host: "gateway.push.apple.com", port: 2195),
                                 "sandbox": Endpoint(host: "gateway.sandbox.push.apple.com", port: 2195)]

    /// The binary provider API authenticates by client certificate only, and the embedded mock
    /// speaks HTTP/2 only.
    static func checkBinary(_ command: SendCommand, endpoints: [String]) throws {
        if !command.keyFile.isEmpty || command.keyID != nil || command.teamID != nil || command.keysFile != nil {
            throw RunFailure.usage("--protocol binary with token auth (--key-file/--key-id/--team-id): the binary provider API authenticates by client certificate only; give --cert-file/--cert-key-file or --p12-file, or use --protocol http2")
        }
        if command.certFile.isEmpty && command.certKeyFile.isEmpty && command.p12File.isEmpty {
            throw RunFailure.usage("--protocol binary needs the app's client certificate: --cert-file C.pem --cert-key-file K.pem, or --p12-file F.p12")
        }
        if command.certFile.count + command.p12File.count > 1 {
            throw RunFailure.usage("--protocol binary takes one certificate (the binary provider API binds a connection to one app): run one process per certificate")
        }
        if endpoints.contains("mock") {
            throw RunFailure.usage("--protocol binary with --endpoint mock: the embedded mock speaks HTTP/2 only; run `apns-bulk mock-server --legacy-binary-listen HOST:PORT --client-ca CA.pem` and give --endpoint HOST:PORT")
        }
        if command.binaryQuietMs < 1 { throw RunFailure.usage("--binary-quiet-ms \(command.binaryQuietMs): must be at least 1") }
        if command.binaryWindow < 1 { throw RunFailure.usage("--binary-window \(command.binaryWindow): must be at least 1") }
    }
}
