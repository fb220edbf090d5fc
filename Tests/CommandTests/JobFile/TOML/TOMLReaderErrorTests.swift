import Testing
@testable import apns_bulk

/// Text that is not TOML, or TOML a job file does not use: each is an error that says where and
/// what was expected, never a crash. The inputs that crashed the toml++ inside TOMLKit (found by
/// fuzzing the job-file reader) are among them.
@Suite struct TOMLReaderErrorTests {
    /// The error `text` gives, as `--config` prints it after the path.
    func message(_ text: String) -> String? {
        do {
            _ = try TOMLReader.read(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        // The toml++ assertions the fuzzer found, as it found them.
        ("endpoint = \"mock\"\n[:441\"]\nconnections = 8\nmax-streamt\0= 5.true\n",
         "line 2: not TOML: a table header must start with a key ([name] or [\"quoted name\"]), found ':' (column 2)"),
        ("[:x]\n", "line 1: not TOML: a table header must start with a key ([name] or [\"quoted name\"]), found ':' (column 2)"),
        ("progress = \"never\"\n[[[a]]]\n", "line 2: not TOML: a table header must start with a key ([name] or [\"quoted name\"]), found '[' (column 3)"),
        ("connections = 2\n\n[\n", "line 3: not TOML: a table header must start with a key ([name] or [\"quoted name\"]), found the end of the line (column 2)"),
        ("[mock]\ngoaway-after = 5\n[[ =\n", "line 3: not TOML: a table header must start with a key ([name] or [\"quoted name\"]), found '=' (column 4)"),
        ("endpoint = [ }\narr = [_!1], [\"a\"]]\n", "line 1: not TOML: an array holds values separated by commas, found '}' (column 14)"),
        ("connections = [\n  1,\n  }\n", "line 3: not TOML: an array holds values separated by commas, found '}' (column 3)"),
        ("x = 1979-05-27Tz\n", "line 1: dates are not used in a job file"),
    ])
    func inputsThatCrashedTheOldParserAreErrors(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test(arguments: [
        ("when = 1979-05-27T07:32:00Z", "line 1: dates are not used in a job file"),
        ("a = 1\nwhen = 1979-05-27", "line 2: dates are not used in a job file"),
        ("at = 07:32:00", "line 1: dates are not used in a job file"),
        ("list = [1, 1979-05-27 07:32:00]", "line 1: dates are not used in a job file"),
    ])
    func datesAreRefusedByName(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test(arguments: [
        ("a = 1\na = 2", "line 2: not TOML: `a` is defined twice (first on line 1) (column 1)"),
        ("a.b = 1\n\"a\".'b' = 2", "line 2: not TOML: `a.b` is defined twice (first on line 1) (column 1)"),
        ("[t]\n[t]", "line 2: not TOML: table [t] is defined twice (first on line 1) (column 1)"),
        ("[t.u]\n[t]\n[t]", "line 3: not TOML: table [t] is defined twice (first on line 2) (column 1)"),
        ("t.u = 1\n[t]", "line 2: not TOML: table [t] was already made by dotted keys on line 1 (column 1)"),
        ("[a]\nb.c = 1\n[a.b]", "line 3: not TOML: table [a.b] was already made by dotted keys on line 2 (column 1)"),
        ("t = 1\n[t.u]", "line 2: not TOML: `t` is already a value (line 1), so [t.u] cannot make it a table (column 1)"),
        ("t = {}\n[t]", "line 2: not TOML: `t` is already a value (line 1), so [t] cannot make it a table (column 1)"),
        ("t = { a = 1 }\nt.b = 2", "line 2: not TOML: `t` is already a value (line 1), so `t.b` cannot add a key to it (column 1)"),
        ("t = [1]\n[[t]]", "line 2: not TOML: `t` is already a value (line 1), so [[t]] cannot make it a table (column 1)"),
        ("[t]\n[[t]]", "line 2: not TOML: [[t]] appends to an array of tables, but `t` is a table (line 1) (column 1)"),
        ("[[t]]\n[t]", "line 2: not TOML: [t] defines `t`, which [[t]] made an array of tables on line 1 (column 1)"),
        ("[a.b]\nx = 1\n[a]\nb.y = 2", "line 4: not TOML: `a.b` has a header of its own ([a.b], line 1); set `y` under it (column 1)"),
        ("[a.b.c]\n[a]\nb.y = 2", "line 3: not TOML: `a.b` is a table the header on line 1 made; set `y` under a header [a.b] (column 1)"),
        ("[[a.k]]\n[a]\nk.y.z = 1", "line 3: not TOML: `a.k` is an array of tables ([[a.k]], line 1); set `y.z` under a [[a.k]] header (column 1)"),
        ("[mock]\nfail = \"503:0.1\"\nfail = \"500:0.1\"", "line 3: not TOML: `mock.fail` is defined twice (first on line 2) (column 1)"),
        ("p = { a = 1, a = 2 }", "line 1: not TOML: `a` is defined twice (first on line 1) (column 14)"),
    ])
    func duplicatesAreErrorsAsTOMLSays(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test(arguments: [
        ("topic = com.example", "line 1: not TOML: `com.example` is not a value: a string goes in quotes (\"com.example\"), a number is digits, a boolean true or false (column 9)"),
        ("topic \"x\"", "line 1: not TOML: expected '=' after the key `topic`, found '\"' (column 7)"),
        ("topic =", "line 1: not TOML: `topic` has no value after its '=' (column 8)"),
        ("topic = # nothing", "line 1: not TOML: `topic` has no value after its '=' (column 9)"),
        ("= 1", "line 1: not TOML: expected a key (a name, a \"quoted name\" or a dotted.name) or a [table] header, found '=' (column 1)"),
        ("a. = 1", "line 1: not TOML: expected a key (a name of letters, digits, '-' and '_', or a quoted name), found '=' (column 4)"),
        ("a = 1 b = 2", "line 1: not TOML: expected the end of the line after the value of `a`, found 'b' (column 7)"),
        ("[t] x = 1", "line 1: not TOML: expected the end of the line after the header [t], found 'x' (column 5)"),
        ("[t", "line 1: not TOML: expected ']' to close the header [t], found the end of the file (column 3)"),
        ("[[t]", "line 1: not TOML: expected ']]' to close the header [[t]], found ']' (column 4)"),
        ("a = \"open\nb = 1", "line 1: not TOML: a string in \"...\" must end on its own line (a string of several lines goes in \"\"\"...\"\"\"), found the end of the line (column 10)"),
        ("a = 'open", "line 1: not TOML: a string in '...' must end on its own line (a string of several lines goes in '''...'''), found the end of the file (column 10)"),
        ("a = \"\"\"\nnever closed", "line 1: not TOML: the string opened with \"\"\" has no closing \"\"\" (column 5)"),
        ("a = '''never closed''", "line 1: not TOML: the string opened with ''' has no closing ''' (column 5)"),
        ("a = \"\\x41\"", "line 1: not TOML: \\x is not an escape of TOML's (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX); a backslash itself is \\\\ (column 6)"),
        ("a = \"\\u12\"", "line 1: not TOML: \\u takes exactly 4 hexadecimal digits, found '\"' (column 6)"),
        ("a = \"\\uD800\"", "line 1: not TOML: \\uD800 is not a Unicode scalar value (a surrogate, or past 10FFFF) (column 6)"),
        ("a = \"\\U00110000\"", "line 1: not TOML: \\U00110000 is not a Unicode scalar value (a surrogate, or past 10FFFF) (column 6)"),
        ("a = \"\u{1}\"", "line 1: not TOML: a string cannot hold a control character (U+0001); write it as an escape such as \\t or \\u0001 (column 6)"),
        ("a = 1 # \u{0} in a comment", "line 1: not TOML: a comment cannot hold a control character (U+0000) (column 9)"),
        ("a = 1\rb = 2", "line 1: not TOML: a carriage return must be followed by a line feed (column 6)"),
        ("\"\"\"k\"\"\" = 1", "line 1: not TOML: a key cannot be a multi-line string (column 1)"),
    ])
    func syntaxErrorsSayWhereAndWhatWasExpected(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test(arguments: [
        ("n = 01", "line 1: not TOML: `01`: a decimal number has no leading zeros (column 5)"),
        ("n = 1__0", "line 1: not TOML: `1__0`: an '_' in a number must stand between two digits (column 5)"),
        ("n = 1_", "line 1: not TOML: `1_`: an '_' in a number must stand between two digits (column 5)"),
        ("n = +0x10", "line 1: not TOML: `+0x10`: a number written with 0x takes no sign (column 5)"),
        ("n = 0b102", "line 1: not TOML: `0b102` is not a number TOML knows ('2' is not a digit of base 2 here) (column 5)"),
        ("n = 9223372036854775808", "line 1: not TOML: `9223372036854775808` does not fit a 64-bit integer (column 5)"),
        ("n = 0x", "line 1: not TOML: `0x` is not a number TOML knows (digits are missing) (column 5)"),
        ("n = 1.", "line 1: not TOML: `1.` is not a number TOML knows (digits are missing) (column 5)"),
        ("n = 1e", "line 1: not TOML: `1e` is not a number TOML knows (digits are missing) (column 5)"),
        ("n = 1.2.3", "line 1: not TOML: `1.2.3` is not a number TOML knows ('.' is not a digit of base 10 here) (column 5)"),
        ("n = TRUE", "line 1: not TOML: `TRUE` is not a value: a string goes in quotes (\"TRUE\"), a number is digits, a boolean true or false (column 5)"),
    ])
    func numbersTOMLRefusesAreErrors(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test(arguments: [
        ("a = [1 2]", "line 1: not TOML: expected ',' or ']' after an item of the array, found '2' (column 8)"),
        ("a = [1,,2]", "line 1: not TOML: an array holds values separated by commas, found ',' (column 8)"),
        ("a = [\n1,\n", "line 1: not TOML: the array opened here has no closing ']' (column 5)"),
        ("t = { a = 1, }", "line 1: not TOML: an inline table has no ',' after its last pair (column 14)"),
        ("t = { a = 1\n}", "line 1: not TOML: expected ',' or '}' after a pair of the inline table (which is written on one line), found the end of the line (column 12)"),
        ("t = {", "line 1: not TOML: expected a key in the inline table, found the end of the file (column 6)"),
    ])
    func arraysAndInlineTablesThatDoNotCloseAreErrors(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test func nestingDeeperThanTheLimitIsAnErrorNotAStackOverflow() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(message("a = " + deep) == "line 1: not TOML: tables and arrays nest more than 64 deep (column 69)")
        let inline = String(repeating: "{ a = ", count: 10_000)
        #expect(message("t = " + inline)?.hasPrefix("line 1: not TOML: tables and arrays nest more than 64 deep") == true)
        let dotted = Array(repeating: "a", count: 100_000).joined(separator: ".")
        #expect(message(dotted + " = 1") == "line 1: not TOML: tables and arrays nest more than 64 deep (column 200000)")
        #expect(message("[" + dotted + "]") == "line 1: not TOML: tables and arrays nest more than 64 deep (column 200001)")
        #expect(message("[" + Array(repeating: "a", count: 40).joined(separator: ".") + "]\n"
                        + Array(repeating: "b", count: 30).joined(separator: ".") + " = 1")?
                    .hasPrefix("line 2: not TOML: tables and arrays nest more than 64 deep") == true)
        let limit = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(message("a = " + limit) == nil)
    }
}
