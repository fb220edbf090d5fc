import Foundation

extension DatabaseURL {
    /// Why `--database` cannot be read: one line that names the flag, shows the URL with any
    /// password hidden, and lists the forms accepted.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    static let acceptedForms = "postgresql://user[:password]@host[:port]/db, mysql://user[:password]@host[:port]/db "
        + "or sqlite:PATH (sqlite:///abs/path)"

    /// Reads `--database`: `postgresql://` or `postgres://`, `mysql://` or `mariadb://`, `sqlite:PATH`
    /// or `sqlite:///abs/path`. Parts are percent-decoded; a port must be 1 to 65535.
    public static func parse(_ text: String) throws(ParseError) -> DatabaseURL {
        let shown = redact(text)
        func refuse(_ why: String) -> ParseError {
            ParseError(description: "--database \(shown): \(why); give \(acceptedForms)")
        }
        guard let colon = text.firstIndex(of: ":") else { throw refuse("no scheme") }
        let scheme = text[..<colon].lowercased()
        let rest = text[text.index(after: colon)...]
        switch scheme {
        case "sqlite":
            var path = Substring(rest)
            if path.hasPrefix("//") {
                path = path.dropFirst(2)
                guard path.hasPrefix("/") else { throw refuse("sqlite:// takes no host: write sqlite:///abs/path or sqlite:PATH") }
            }
            guard let decoded = percentDecoded(path), !decoded.isEmpty else {
                throw refuse(path.isEmpty ? "no file path" : "a bad %-escape in the path")
            }
            return DatabaseURL(system: .sqlite, user: nil, password: nil, host: nil, port: nil, database: decoded,
                               parameters: [], redacted: shown)
        case "postgresql", "postgres":
            return try server(.postgresql, rest, shown: shown, refuse: refuse)
        case "mysql", "mariadb":
            return try server(.mysql, rest, shown: shown, refuse: refuse)
        default:
            throw refuse("unknown scheme \(scheme)")
        }
    }

    private static func server(_ system: System, _ rest: Substring, shown: String,
                               refuse: (String) -> ParseError) throws(ParseError) -> DatabaseURL {
        guard rest.hasPrefix("//") else { throw refuse("the scheme must be followed by //") }
        let afterSlashes = rest.dropFirst(2)
        let authorityEnd = afterSlashes.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterSlashes.endIndex
        let authority = afterSlashes[..<authorityEnd]
        var pathAndQuery = afterSlashes[authorityEnd...]
        var user: String? = nil, password: String? = nil
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            let userText = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let decodedUser = percentDecoded(userText[0]) else { throw refuse("a bad %-escape in the user") }
            user = decodedUser.isEmpty ? nil : decodedUser
            if userText.count == 2 {
                guard let decodedPassword = percentDecoded(userText[1]) else { throw refuse("a bad %-escape in the password") }
                password = decodedPassword
            }
        }
        var hostText = hostPort
        var port: Int? = nil
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw refuse("an IPv6 host without its closing ]") }
            hostText = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("text after the IPv6 host") }
                port = try portNumber(after.dropFirst(), refuse: refuse)
            }
        } else if let portColon = hostPort.lastIndex(of: ":") {
            hostText = hostPort[..<portColon]
            port = try portNumber(hostPort[hostPort.index(after: portColon)...], refuse: refuse)
        }
        guard let host = percentDecoded(hostText), !host.isEmpty else { throw refuse("no host") }
        var query: Substring = ""
        if let questionMark = pathAndQuery.firstIndex(of: "?") {
            query = pathAndQuery[pathAndQuery.index(after: questionMark)...]
            pathAndQuery = pathAndQuery[..<questionMark]
        }
        guard let database = percentDecoded(pathAndQuery.drop(while: { $0 == "/" })) else {
            throw refuse("a bad %-escape in the database name")
        }
        guard !database.isEmpty else { throw refuse("no database name after the host (…/db)") }
        guard !database.contains("/") else { throw refuse("a database name holds no /") }
        var parameters: [(name: String, value: String)] = []
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = percentDecoded(parts[0]), !name.isEmpty,
                  let value = percentDecoded(parts[1]) else { throw refuse("a query parameter that is not NAME=VALUE") }
            parameters.append((name, value))
        }
        return DatabaseURL(system: system, user: user, password: password, host: host, port: port, database: database,
                           parameters: parameters, redacted: shown)
    }

    private static func portNumber(_ text: Substring, refuse: (String) -> ParseError) throws(ParseError) -> Int {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy(\.isASCII), let port = Int(text), (1...65535).contains(port) else {
            throw refuse("the port must be a number from 1 to 65535")
        }
        return port
    }

    /// `text` with the password of a `scheme://user:password@host` URL replaced by `***`; the
    /// rest as given (for an error, the URL need not be valid).
    static func redact(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let afterScheme = text[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? afterScheme.endIndex
        guard let at = afterScheme[..<authorityEnd].lastIndex(of: "@"),
              let passwordColon = afterScheme[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<afterScheme.index(after: passwordColon)]) + "***" + String(text[at...])
    }

    /// `%XX` escapes decoded as UTF-8; nil for a bad escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: some StringProtocol) -> String? {
        String(text).removingPercentEncoding
    }
}
