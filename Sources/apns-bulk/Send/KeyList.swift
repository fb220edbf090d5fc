import APNs

/// The signing keys of a run as the operator lists them: repeated `--key-file` (with
/// `--key-id`/`--team-id`), or the `[[keys]]` tables of a TOML file (send's `--config` or
/// `--keys-file`, the mock's `--keys-file`). One reader for send and the mock, so a file that
/// rehearses a campaign describes the mock's keys too. Nothing is loaded from disk but the TOML.
enum KeyList {
    /// A key and where it was given, for messages ("--config job.toml: [[keys]] entry 2").
    struct Entry: Equatable {
        var key: KeyDescription
        var origin: String
    }

    /// The keys a table entry may hold, as written (underscores are read as dashes).
    static let entryKeys = ["file", "key-id", "team-id", "environment", "topics", "related-key-id"]

    /// `--key-file` (repeatable): with one file its id is `--key-id`, else (and with several, always)
    /// the one in Apple's download name `AuthKey_<KEYID>.p8`; `teamID` applies to every file.
    static func commandLine(files: [String], keyID: String?, teamID: String?,
                            fileFlag: String = "--key-file", idFlag: String = "--key-id",
                            teamFlag: String = "--team-id") throws -> [Entry] {
        guard !files.isEmpty else { return [] }
        if files.count > 1, let keyID {
            throw RunFailure.usage("\(idFlag) \(keyID) with \(files.count) \(fileFlag): \(idFlag) names one key; with several, each file must keep Apple's download name AuthKey_<KEYID>.p8 (or list them as [[keys]] in a job file, each with its key-id)")
        }
        var entries: [Entry] = []
        for file in files {
            let origin = "\(fileFlag) \(file)"
            guard let id = (files.count == 1 ? keyID : nil) ?? KeyDescription.keyID(fromFileName: file) else {
                let fix = files.count == 1
                    ? "give \(idFlag), or keep Apple's download name AuthKey_<KEYID>.p8"
                    : "with several \(fileFlag) each file must keep Apple's download name AuthKey_<KEYID>.p8; rename it, or list the keys as [[keys]] in a job file, each with its key-id"
                throw RunFailure.usage("\(origin): no key id: \(fix)")
            }
            guard let teamID else {
                throw RunFailure.usage("\(fileFlag) needs \(teamFlag) (the 10-character Team ID; it applies to every \(fileFlag))")
            }
            entries.append(Entry(key: KeyDescription(file: file, keyID: try checkedKeyID(id, origin: origin),
                                                     teamID: try checkedTeamID(teamID, origin: teamFlag)),
                                 origin: origin))
        }
        return entries
    }

    /// The `keys` array of tables of `table` (absent: no keys). `source` names the file in
    /// messages ("--config job.toml"); `defaultTeamID` serves entries without `team-id`.
    static func entries(in table: TOMLTable, source: String, defaultTeamID: String?) throws -> [Entry] {
        guard let value = table["keys"] else { return [] }
        guard let items = value.array, items.allSatisfy({ $0.table != nil }) else {
            throw RunFailure.usage("\(source): `keys` must be an array of tables, one [[keys]] header per key")
        }
        return try items.enumerated().map { index, item in
            try entry(item.table ?? TOMLTable(), number: index + 1, source: source, defaultTeamID: defaultTeamID)
        }
    }

    private static func entry(_ table: TOMLTable, number: Int, source: String, defaultTeamID: String?) throws -> Entry {
        let origin = "\(source): [[keys]] entry \(number)"
        var fields: [String: TOMLValue] = [:]
        for item in table.entries {
            let name = item.key.replacingOccurrences(of: "_", with: "-")
            guard entryKeys.contains(name) else {
                throw RunFailure.usage("\(origin): unknown key `\(item.key)`; a key's table holds \(entryKeys.joined(separator: ", "))")
            }
            fields[name] = item.value
        }
        func text(_ name: String) throws -> String? {
            guard let value = fields[name] else { return nil }
            guard let string = value.string, !string.isEmpty else {
                throw RunFailure.usage("\(origin): `\(name)` is \(JobFileValueKind.name(of: value)); give a non-empty string")
            }
            return string
        }
        guard let file = try text("file") else {
            throw RunFailure.usage("\(origin): no `file`; give the .p8 key's path, file = \"AuthKey_ABCDE12345.p8\"")
        }
        let fileOrigin = "\(origin) (\(file))"
        guard let keyID = try text("key-id") ?? KeyDescription.keyID(fromFileName: file) else {
            throw RunFailure.usage("\(fileOrigin): no `key-id`, and the file name is not Apple's AuthKey_<KEYID>.p8; add key-id = \"<the 10-character Key ID>\"")
        }
        guard let teamID = try text("team-id") ?? defaultTeamID else {
            throw RunFailure.usage("\(fileOrigin): no `team-id`; add team-id = \"<the 10-character Team ID>\" (or give --team-id for every key)")
        }
        var description = KeyDescription(file: file, keyID: try checkedKeyID(keyID, origin: fileOrigin),
                                         teamID: try checkedTeamID(teamID, origin: fileOrigin))
        if let environment = try text("environment"), environment.lowercased() != "any" {
            guard let parsed = APNsEnvironment(parsing: environment) else {
                throw RunFailure.usage("\(fileOrigin): environment \"\(environment)\": give production, sandbox or any (the default)")
            }
            description.environment = parsed
        }
        if let value = fields["topics"] {
            guard let array = value.array, !array.isEmpty, array.allSatisfy({ !($0.string ?? "").isEmpty }) else {
                throw RunFailure.usage("\(fileOrigin): `topics` must be a non-empty array of bundle ids, topics = [\"com.example.app\"]; leave it out for a team-scoped key (any topic of the team)")
            }
            description.topics = array.compactMap(\.string)
        }
        if let related = try text("related-key-id") {
            description.relatedKeyID = try checkedKeyID(related, origin: "\(fileOrigin): related-key-id")
        }
        return Entry(key: description, origin: fileOrigin)
    }

    /// Refuses a key id given twice and a `related-key-id` that names no key of the list (or the key itself).
    static func check(_ entries: [Entry]) throws {
        var seen: [String: String] = [:]
        for entry in entries {
            if let first = seen[entry.key.keyID] {
                throw RunFailure.usage("\(entry.origin): key id \(entry.key.keyID) is already given by \(first); give each key once")
            }
            seen[entry.key.keyID] = entry.origin
        }
        for entry in entries {
            guard let related = entry.key.relatedKeyID else { continue }
            if related == entry.key.keyID || seen[related] == nil {
                throw RunFailure.usage("\(entry.origin): related-key-id \(related) names no other key of this run; list the related key too, or drop related-key-id")
            }
        }
    }

    private static func checkedKeyID(_ text: String, origin: String) throws -> String {
        do { return try ProviderToken.KeyID(text).value } catch { throw RunFailure.usage("\(origin): \(error.message)") }
    }

    private static func checkedTeamID(_ text: String, origin: String) throws -> String {
        do { return try ProviderToken.TeamID(text).value } catch { throw RunFailure.usage("\(origin): \(error.message)") }
    }
}
