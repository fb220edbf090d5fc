import ArgumentParser

/// Every subcommand of `apns-bulk`, in the order `--help` lists them.
let registeredSubcommands: [any ParsableCommand.Type] = [
    ReportCommand.self,
    TokenCommand.self,
    GenCommand.self,
]
