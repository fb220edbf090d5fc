import APNs
import ArgumentParser

/// `apns-bulk token`: prints one provider token, e.g. to try a key with curl.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print one provider token (JWT, ES256) for APNs token authentication.",
        // ArgumentParser prints a usage line unwrapped: this one fits 80 columns.
        usage: "apns-bulk token --key-file <key-file> --key-id <key-id>\n"
            + "--team-id <team-id> [--issued-at <issued-at>]",
        discussion: "Prints the token alone on one line. It is a credential for an hour: do not log it."
    )

    @Option(name: .customLong("key-file"), help: "The APNs signing key (.p8) from your Apple Developer account.")
    var keyFile: String

    @Option(name: .customLong("key-id"), help: "The key's 10-character Key ID.")
    var keyID: String

    @Option(name: .customLong("team-id"), help: "Your 10-character Team ID.")
    var teamID: String

    @Option(name: .customLong("issued-at"), help: "The token's iat, in seconds since 1970 (default: now).")
    var issuedAt: Int64?

    func run() throws {
        let keyID: ProviderToken.KeyID
        let teamID: ProviderToken.TeamID
        do {
            keyID = try ProviderToken.KeyID(self.keyID)
            teamID = try ProviderToken.TeamID(self.teamID)
        } catch {
            throw RunFailure.usage(error.message)
        }
        if let issuedAt, issuedAt < 0 {
            throw RunFailure.usage("--issued-at \(issuedAt) is negative: give seconds since 1970, e.g. `date +%s`")
        }
        do {
            let key = try SigningKey(contentsOfFile: keyFile)
            let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID,
                                          issuedAt: issuedAt ?? TokenSource.systemClock())
            print(token.jwt)
        } catch {
            throw RunFailure.usage(error.message)
        }
    }
}
