import APNs
import Foundation
import Testing

/// Python's `json` module, made strict (UTF-8 decoded strictly, no NaN/Infinity, no lone
/// surrogates, top level an object), as an independent judge of the validator.
private let strictPythonJudge = #"""
import json, struct, sys
data = open(sys.argv[1], 'rb').read()
out, i = [], 0
def constant(name): raise ValueError(name)
while i < len(data):
    n = struct.unpack('<I', data[i:i + 4])[0]
    doc = data[i + 4:i + 4 + n]
    i += 4 + n
    try:
        value = json.loads(doc.decode('utf-8', 'strict'), parse_constant=constant)
        json.dumps(value, ensure_ascii=False).encode('utf-8', 'strict')
        out.append('1' if isinstance(value, dict) else '0')
    except Exception:
        out.append('0')
sys.stdout.write(''.join(out))
"""#

/// SplitMix64: a fixed seed gives the same documents on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct JSONValidatorDifferentialTests {
    @Test func validatorAgreesWithStrictPythonOnMutatedDocuments() throws {
        let seeds = [
            #"{"aps":{"alert":{"title":"T\u00e9","body":"B \ud83d\ude00"},"badge":1},"n":[-0.5e-3,10,true,false,null],"s":"é€😀"}"#,
            #"{"a":[1,2,{"b":"c"}],"d":{},"e":[],"f":"\"\\\/\b\f\n\r\t"}"#,
            #"{"reason":"Unregistered","timestamp":1700000000123}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"\ 0123456789-+.eEtrufalsnu"#.utf8)
            + [0x09, 0x0a, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xed, 0xa0, 0xef, 0xf0, 0xf4, 0xf5, 0xff]
        var random = SplitMix64(state: 20_261_123)
        var documents = [[UInt8]]()
        for _ in 0..<20_000 {
            var document = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0...document.count, using: &random)
                let byte = alphabet.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where at < document.count: document[at] = byte
                case 1: document.insert(byte, at: at)
                default: if at < document.count { document.remove(at: at) }
                }
            }
            documents.append(document)
        }

        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("json-differential-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var file = Data()
        for document in documents {
            withUnsafeBytes(of: UInt32(document.count).littleEndian) { file.append(contentsOf: $0) }
            file.append(contentsOf: document)
        }
        let input = directory.appendingPathComponent("documents.bin")
        try file.write(to: input)

        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", strictPythonJudge, input.path]
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let verdicts = Array(output.fileHandleForReading.readDataToEndOfFile())
        python.waitUntilExit()
        try #require(python.terminationStatus == 0)
        try #require(verdicts.count == documents.count)

        var accepted = 0
        for (document, verdict) in zip(documents, verdicts) {
            let pythonAccepts = verdict == UInt8(ascii: "1")
            if pythonAccepts { accepted += 1 }
            #expect(JSONValidator.isJSONObject(document) == pythonAccepts,
                    "\(String(decoding: document, as: UTF8.self)) \(document)")
        }
        // Both outcomes are well represented, so agreement means something.
        #expect(accepted > 1_000 && accepted < documents.count - 1_000)
    }
}
