import ArgumentParser

/// Every subcommand of `apns-bulk`, in the order `--help` lists them (docs/ARCHITECTURE.md's order).
let registeredSubcommands: [any ParsableCommand.Type] = [
    SendCommand.self,
    MockServerCommand.self,
    ReportCommand.self,
    TokenCommand.self,
    GenCommand.self,
    FeedbackCommand.self,
    CleanupCommand.self,
    ChannelsCommand.self,
    BroadcastCommand.self,
]
