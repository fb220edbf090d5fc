import ArgumentParser

/// How `send` and `broadcast` reach APNs, one declaration for both: streams per connection, the
/// extra CA, the proxy, and the embedded mock's options. `--connections` and `--rate` stay with each
/// command, where their help differs for a reason (send spreads connections across endpoints and
/// paces notifications; a broadcast has one host and paces updates).
struct ConnectionFlags: ParsableArguments {
    @Option(name: .customLong("max-streams"), help: "Most concurrent streams per connection; the server may allow fewer.")
    var maxStreams = 1000
    @Option(name: .customLong("ca-file"), help: "Also trust this CA (PEM) when verifying the server; adds trust, never disables it. Default: none; the system's trust store alone.")
    var caFile: String?
    @Option(help: "Reach APNs through this HTTP CONNECT proxy, http://[USER:PASSWORD@]HOST:PORT. Without it, https_proxy or HTTPS_PROXY is used when set, unless no_proxy or NO_PROXY exempts the host; --proxy '' connects directly. TLS to APNs runs inside the tunnel. --endpoint mock is never proxied. Default: the environment's proxy, if any.")
    var proxy: String?
    /// A job file's [mock] table arrives here too.
    @Option(name: .customLong("mock-option"),
            help: "A mock-server flag for --endpoint mock, as NAME=VALUE or NAME (e.g. goaway-after=5000); repeatable. Default: none.")
    var mockOptions: [String] = []
}
