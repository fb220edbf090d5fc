import ArgumentParser

/// The flags every `channels` subcommand takes: the app, the credential (send's flags, read by
/// send's code: `SendCredentials`), and where its channels are managed.
struct ChannelsOptions: ParsableArguments {
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID, whose channels these are, without a .push-type suffix.")
    var bundleID: String

    // Credentials: one key or one certificate.
    @OptionGroup var credentials: AppCredentialFlags

    // Where
    @Option(help: "production or sandbox: the environment whose channels these are; a channel of one is unknown to the other. Default: production, or sandbox with --endpoint sandbox.")
    var environment: SendCommand.EnvironmentChoice?
    @Option(help: "production, which is api-manage-broadcast.push.apple.com:2196; sandbox, api-manage-broadcast.sandbox.push.apple.com:2195; HOST:PORT, serving --environment; or mock, an APNs emulator in this process, which starts with no channels and ends with the command. Default: the host of --environment.")
    var endpoint: String?
    @Option(name: .customLong("ca-file"), help: "Also trust this CA (PEM) when verifying the server; adds trust, never disables it. Default: none; the system's trust store alone.")
    var caFile: String?
    @Option(help: "Reach APNs through this HTTP CONNECT proxy, http://[USER:PASSWORD@]HOST:PORT; --proxy '' connects directly. Default: https_proxy or HTTPS_PROXY when set, unless no_proxy or NO_PROXY exempts the host.")
    var proxy: String?
}
