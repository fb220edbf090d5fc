import ArgumentParser

/// The metrics flags of `send` and `broadcast`, one declaration for both; `SendSetup.metricsOptions`
/// turns them into the run's `MetricsOptions`.
struct MetricsFlags: ParsableArguments {
    @Option(name: .customLong("metrics-out"),
            help: "Write Prometheus metrics to this .prom file, e.g. in node_exporter's textfile directory; it is replaced atomically every --metrics-interval seconds and at the end. Default: none.")
    var metricsOut: String?
    @Option(help: "Push the same Prometheus metrics to the Pushgateway at this http:// URL every --metrics-interval seconds and at the end. A failed push is a warning, never fatal. Default: none.")
    var pushgateway: String?
    @Option(name: .customLong("metrics-job"), help: "The job label of pushed metrics.")
    var metricsJob = "apns_bulk"
    @Option(name: .customLong("metrics-instance"), help: "The instance label of the pushed metrics. Default: this host's name.")
    var metricsInstance: String?
    @Option(name: .customLong("metrics-interval"), help: "Seconds between rewrites of --metrics-out and pushes to --pushgateway.")
    var metricsInterval = 5.0
}
