extension JobFile {
    /// A job file's `[mock]` table configures the embedded mock: without `--endpoint mock` (in the
    /// file or on the command line, whichever wins) it would be ignored while the run goes to the
    /// endpoints given, Apple's production by default. `arguments` are the expanded ones.
    static func checkMockTable(_ arguments: [String], path: String) throws {
        var endpoints: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--endpoint", index + 1 < arguments.count { endpoints.append(arguments[index + 1]) }
            if argument.hasPrefix("--endpoint=") { endpoints.append(String(argument.dropFirst("--endpoint=".count))) }
        }
        guard !endpoints.contains("mock") else { return }
        let named = endpoints.isEmpty ? "production (api.push.apple.com:443, the default)" : endpoints.joined(separator: ", ")
        throw RunFailure.usage("--config \(path): its [mock] table configures the embedded mock of --endpoint mock, but "
            + "this run's endpoints are \(named), where it would be ignored: add endpoint = [\"mock\"] to the file (or "
            + "--endpoint mock) to rehearse, or remove [mock]; nothing was sent")
    }
}
