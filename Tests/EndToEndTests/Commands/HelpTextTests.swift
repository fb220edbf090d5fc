import Foundation
import Testing
import TestSupport

/// `--help` at 80 columns, the width of a default terminal and of a mailed cron report, reads as
/// sentences: no line wider, no line break of our own in mid-sentence (ArgumentParser wraps
/// paragraphs itself, but keeps every newline it is given), no parenthesis split across lines.
@Suite struct HelpTextTests {
    static let commands: [[String]] = [[], ["send"], ["mock-server"], ["report"], ["token"], ["gen"], ["feedback"], ["cleanup"],
                                       ["channels"], ["channels", "create"], ["channels", "list"], ["channels", "show"],
                                       ["channels", "delete"], ["broadcast"]]

    static func help(_ command: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        let result = try Binary.run(command + ["--help"], environment: environment)
        #expect(result.status == 0, "\(command): \(result.stderr)")
        return result.stdout
    }

    /// What is wrong with `text` as help at 80 columns, one entry per bad line.
    static func problems(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [String] = []
        var openParentheses = 0
        for (index, line) in lines.enumerated() {
            if line.count > 80 { found.append("wider than 80: \(line)") }
            let words = line.split(separator: " ")
            if openParentheses > 0, !words.isEmpty {
                found.append("continues a parenthesis of the line before: \(line)")
            }
            openParentheses = line.reduce(openParentheses) { depth, character in
                character == "(" ? depth + 1 : character == ")" ? max(0, depth - 1) : depth
            }
            // A wrapped line is as full as it can be: one that the next line's first word would
            // have fitted on was broken by a newline in the text, mid-sentence if the next line
            // goes on in lowercase. (A line of another indentation is a list item or a new option.)
            guard index > 0, let first = words.first, let initial = first.first, initial.isLowercase else { continue }
            let previous = lines[index - 1]
            guard !previous.isEmpty, indentation(previous) == indentation(line) else { continue }
            let ended = previous.hasSuffix(".") || previous.hasSuffix(":") || previous.hasSuffix(";")
            if !ended && previous.count + 1 + first.count < 80 {
                found.append("broken mid-sentence: \(previous) / \(line)")
            }
        }
        return found
    }

    static func indentation(_ line: String) -> Int { line.prefix(while: { $0 == " " }).count }

    @Test(arguments: commands)
    func helpReadsAsSentencesAtEightyColumns(command: [String]) throws {
        let text = try Self.help(command)
        #expect(text.contains("USAGE: apns-bulk"), "\(text)")
        #expect(Self.problems(text) == [], "\(command)")
    }

    /// The checker itself catches what issue 17 found in `send --help`.
    @Test func theCheckCatchesALineBrokenInsideAParenthesis() {
        let broken = """
            Exit status: 0 finished (every row delivered, unregistered, bad_token, failed
            or rejected);
            1 bad input or configuration, nothing sent; 2 aborted (credentials refused, a
            run-level
            misconfiguration, a signal); 3 finished but some rows gave up.
            """
        let found = Self.problems(broken)
        for continued in ["or rejected);", "run-level", "misconfiguration, a signal);"] {
            #expect(found.contains { $0.contains("before: " + continued) }, "\(continued): \(found)")
        }
        #expect(Self.problems("A sentence that wraps where it must, at a space between two words, so that the\n"
                              + "lines are full.") == [])
    }

    /// Every help text ends with examples, and each example uses only flags of its own command:
    /// a renamed flag cannot leave an example behind that no longer runs.
    @Test(arguments: commands)
    func helpEndsWithExamplesOfItsOwnFlags(command: [String]) throws {
        let text = try Self.help(command)
        let parts = text.components(separatedBy: "\nEXAMPLES:\n")
        #expect(parts.count == 2, "\(command): no EXAMPLES section at the end")
        guard parts.count == 2 else { return }
        let examples = parts[1].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let commands = examples.filter { $0.hasPrefix("apns-bulk") }
        #expect((2...3).contains(commands.count), "\(command): \(commands.count) examples")
        if let name = command.first {
            #expect(commands.allSatisfy { $0.hasPrefix("apns-bulk \(name) ") }, "\(commands)")
        }
        for example in commands {
            // The command's words up to its first flag: `send`, or `channels create`.
            let name = example.split(separator: " ").dropFirst().prefix { !$0.hasPrefix("-") }.map(String.init)
            let options = try Self.help(name).components(separatedBy: "\nEXAMPLES:\n")[0]
            let flags = parts[1].split(separator: " ").filter { $0.hasPrefix("--") }
            for flag in flags where example.contains(flag) {
                let bare = flag.split(separator: "=")[0]
                #expect(options.contains("  \(bare) ") || options.contains("  \(bare)\n"), "\(example): \(bare) is not an option of \(name)")
            }
        }
    }

    /// Every option that takes a value says what happens without it: ArgumentParser's own
    /// "(default: X)", or a "Default: ..." of ours for options whose default is no value at all.
    /// Options the usage line requires are exempt.
    @Test(arguments: commands.filter { !$0.isEmpty })
    func everyOptionStatesItsDefault(command: [String]) throws {
        let text = try Self.help(command).components(separatedBy: "\nEXAMPLES:\n")[0]
        let usage = text.components(separatedBy: "\nOPTIONS:\n")[0]
        let options = text.components(separatedBy: "\nOPTIONS:\n").dropFirst().joined()
        var blocks: [String] = []
        for line in options.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  -") { blocks.append(String(line)) } else if !blocks.isEmpty { blocks[blocks.count - 1] += " " + line }
        }
        var silent: [String] = []
        for block in blocks {
            let words = block.split(separator: " ")
            guard let flag = words.first, words.count > 1, words[1].hasPrefix("<") else { continue }
            let required = usage.contains("\(flag) <") && !usage.contains("[\(flag) <")
            if !required && !block.lowercased().contains("default") { silent.append(String(flag)) }
        }
        #expect(silent == [], "\(command): these options do not say their default")
    }
}
