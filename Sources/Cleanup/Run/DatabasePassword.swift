import Foundation

/// Where the database password comes from, so that it can stay off the command line: the URL,
/// an environment variable (`--password-env NAME`), or a file (`--password-file FILE`, its first
/// line: a Kubernetes Secret mounted as a file). None of them given, PostgreSQL's libpq still
/// reads `PGPASSWORD` itself. The password is never part of a message.
public enum DatabasePassword {
    /// Why the password cannot be had: names the flag, never the password.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The password for `url`, or nil when none is given.
    public static func resolve(url: DatabaseURL, environmentVariable: String?, file: String?,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws(Problem) -> String? {
        let given = [url.password != nil, environmentVariable != nil, file != nil].filter { $0 }.count
        guard given <= 1 else {
            throw Problem(description: "the password is given more than once (in --database, --password-env, --password-file); "
                          + "give it one way")
        }
        if let password = url.password { return password }
        if let variable = environmentVariable {
            guard let value = environment[variable] else {
                throw Problem(description: "--password-env \(variable): that environment variable is not set; "
                              + "set it to the database password")
            }
            return value
        }
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Problem(description: "--password-file \(file): cannot read it; give a file whose first line is the password")
            }
            let text = String(decoding: data, as: UTF8.self)
            // Split on Characters that are newlines: "\r\n" is one of them, and is stripped whole.
            let line = text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first.map(String.init) ?? ""
            guard !line.isEmpty else {
                throw Problem(description: "--password-file \(file): its first line is empty; put the password on it")
            }
            return line
        }
        return nil
    }
}
