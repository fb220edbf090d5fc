import ArgumentParser

/// Every subcommand of `apns-bulk`, in the order `--help` lists them (DESIGN.md's order).
let registeredSubcommands: [any ParsableCommand.Type] = [
    MockServerCommand.self,
    ReportCommand.self,
    TokenCommand.self,
    GenCommand.self,
]
