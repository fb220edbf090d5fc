import ArgumentParser

/// The flags every `channels` subcommand takes: the app, the credential (send's flags, read by
/// send's code: `SendCredentials`), and where its channels are managed.
struct ChannelsOptions: ParsableArguments, CredentialFlags {
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID, whose channels these are, without a .push-type suffix.")
    var bundleID: String

    // Credentials: one key or one certificate.
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

    // Where
    @Option(help: "production or sandbox: the environment whose channels these are; a channel of one is unknown to the other. Default: production, or sandbox with --endpoint sandbox.")
    var environment: SendCommand.EnvironmentChoice?
    @Option(help: "production, which is api-manage-broadcast.push.apple.com:2196; sandbox, api-manage-broadcast.sandbox.push.apple.com:2195; HOST:PORT, serving --environment; or mock, an APNs emulator in this process, which starts with no channels and ends with the command. Default: the host of --environment.")
    var endpoint: String?
    @Option(name: .customLong("ca-file"), help: "Also trust this CA (PEM) when verifying the server; adds trust, never disables it. Default: none; the system's trust store alone.")
    var caFile: String?
    @Option(help: "Reach APNs through this HTTP CONNECT proxy, http://[USER:PASSWORD@]HOST:PORT; --proxy '' connects directly. Default: https_proxy or HTTPS_PROXY when set, unless no_proxy or NO_PROXY exempts the host.")
    var proxy: String?

    /// `channels` reads keys from the command line only.
    var keysFile: String? { nil }
    var config: String? { nil }
}
