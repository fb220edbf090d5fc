/// Looks at the PEM armour before OpenSSL does, to tell "encrypted", "RSA", "a certificate" and
/// "not PEM at all" apart: OpenSSL reports all of them as the same decoding failure.
enum PEMLabels {
    /// The labels of every "-----BEGIN <label>-----" line in `bytes`, in order.
    static func labels(in bytes: [UInt8]) -> [String] {
        let text = String(decoding: bytes, as: UTF8.self)
        var labels: [String] = []
        var rest = text[...]
        while let begin = rest.firstRange(of: "-----BEGIN ") {
            let afterBegin = rest[begin.upperBound...]
            guard let end = afterBegin.firstRange(of: "-----") else { break }
            labels.append(String(afterBegin[..<end.lowerBound]))
            rest = afterBegin[end.upperBound...]
        }
        return labels
    }

    /// Throws unless `bytes` holds an unencrypted PKCS#8 or SEC1 private key block.
    static func requirePrivateKey(in bytes: [UInt8], source: String) throws(SigningKeyError) {
        let labels = labels(in: bytes)
        guard let first = labels.first else { throw .notPEM(source: source) }
        if labels.contains("ENCRYPTED PRIVATE KEY") { throw .encrypted(source: source) }
        if labels.contains("PRIVATE KEY") { return }
        if labels.contains("EC PRIVATE KEY") {
            // Traditional PEM encryption: "Proc-Type: 4,ENCRYPTED" inside the block.
            if String(decoding: bytes, as: UTF8.self).contains("Proc-Type: 4,ENCRYPTED") {
                throw .encrypted(source: source)
            }
            return
        }
        if labels.contains("RSA PRIVATE KEY") { throw .rsaKey(source: source) }
        throw .notAPrivateKey(source: source, label: first)
    }
}
