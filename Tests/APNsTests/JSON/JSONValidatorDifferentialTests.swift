import APNs
import Foundation
import Testing
import TestSupport

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

@Suite struct JSONValidatorDifferentialTests {
    @Test func validatorAgreesWithStrictPythonOnMutatedDocuments() throws {
        let seeds = [
            #"{"aps":{"alert":{"title":"T\u00e9","body":"B \ud83d\ude00"},"badge":1},"n":[-0.5e-3,10,true,false,null],"s":"é€😀"}"#,
            #"{"a":[1,2,{"b":"c"}],"d":{},"e":[],"f":"\"\\\/\b\f\n\r\t"}"#,
            #"{"reason":"Unregistered","timestamp":1700000000123}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[],:"\ 0123456789-+.eEtrufalsnu"#.utf8)
            + [0x09, 0x0a, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xed, 0xa0, 0xef, 0xf0, 0xf4, 0xf5, 0xff]
        var random = SeededRandom(seed: 20_261_123)
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

        let directory = try TemporaryDirectory()
        var file = Data()
        for document in documents {
            withUnsafeBytes(of: UInt32(document.count).littleEndian) { file.append(contentsOf: $0) }
            file.append(contentsOf: document)
        }
        let input = try directory.write("documents.bin", bytes: Array(file))

        let python = try Command.tool("python3", ["-c", strictPythonJudge, input])
        try #require(python.status == 0, "\(python.stderr)")
        let verdicts = python.stdoutBytes
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
