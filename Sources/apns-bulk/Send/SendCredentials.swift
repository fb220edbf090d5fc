import APNs
import Foundation
import MockAPNs
import Pipeline
import Transport

/// send's credentials, read from the flags and checked before anything is sent: signing keys
/// (`--key-file`, `--keys-file` or a job file's `[[keys]]`) or client certificates
/// (`--cert-file`/`--cert-key-file`, `--p12-file`), in the order given; or, for a rehearsal
/// against the embedded mock with none given, a fresh key the mock trusts.
struct SendCredentials {
    struct Key {
        let entry: KeyList.Entry
        let signingKey: SigningKey
        /// The key's one token source in this process.
        let source: TokenSource
    }

    struct Certificate {
        /// The file it came from (`--cert-file` or `--p12-file`), for messages.
        let file: String
        let identity: TLSIdentity
        /// The bundle ids it serves (its topics extension, else its UID); empty: it names none.
        let topics: [String]
        /// The one environment it serves; nil for both (or when it does not say).
        let environment: APNsEnvironment?
    }

    var keys: [Key] = []
    var certificates: [Certificate] = []
    /// No credentials were given: `keys` holds a fresh key for the embedded mock.
    var generated = false

    var count: Int { keys.count + certificates.count }

    /// The environments some credential is restricted to.
    var restrictedEnvironments: Set<APNsEnvironment> {
        Set(keys.compactMap(\.entry.key.environment) + certificates.compactMap(\.environment))
    }

    /// One credential for every row of `environment`: one key with no topics of its own, or one
    /// certificate (whose topic rule APNs applies as before), valid there.
    func isOneForEverything(in environment: APNsEnvironment) -> Bool {
        if keys.count == 1, certificates.isEmpty {
            return (keys[0].entry.key.environment ?? environment) == environment && keys[0].entry.key.topics == nil
        }
        return keys.isEmpty && certificates.count == 1 && (certificates[0].environment ?? environment) == environment
    }

    static func load(_ command: some CredentialFlags, onlyMock: Bool) throws -> SendCredentials {
        let usesToken = !command.keyFile.isEmpty || command.keyID != nil || command.teamID != nil || command.keysFile != nil
        let usesCertificates = !command.certFile.isEmpty || !command.certKeyFile.isEmpty || !command.p12File.isEmpty
        if usesToken && usesCertificates {
            throw RunFailure.usage("give one kind of credentials, a run uses one: --key-file/--key-id/--team-id (or [[keys]]), or --cert-file/--cert-key-file and --p12-file")
        }
        var credentials = SendCredentials()
        if usesToken {
            credentials.keys = try loadKeys(command)
        } else if usesCertificates {
            credentials.certificates = try loadCertificates(command)
        } else if onlyMock {
            // Rehearsal with no Apple account: a fresh key that the embedded mock trusts.
            let key: SigningKey
            do { key = try SigningKey.generate() } catch { throw RunFailure.usage(error.message) }
            let entry = KeyList.Entry(key: KeyDescription(file: "(generated)", keyID: EmbeddedMock.keyID,
                                                          teamID: EmbeddedMock.teamID), origin: "the generated key")
            credentials.keys = [Key(entry: entry, signingKey: key, source: try makeSource(key, entry))]
            credentials.generated = true
        } else {
            throw RunFailure.usage("no credentials: give --key-file K.p8 --key-id KID --team-id TEAM (token auth), or --cert-file C.pem --cert-key-file K.pem, or --p12-file F.p12")
        }
        return credentials
    }

    private static func loadKeys(_ command: some CredentialFlags) throws -> [Key] {
        var entries = try KeyList.commandLine(files: command.keyFile, keyID: command.keyID, teamID: command.teamID)
        if let path = command.keysFile {
            let flag = path == command.config ? "--config" : "--keys-file"
            entries += try KeyList.entries(in: JobFile.load(path, flag: flag), source: "\(flag) \(path)",
                                           defaultTeamID: command.teamID)
        }
        if entries.isEmpty {
            throw RunFailure.usage("token auth needs a signing key: --key-file K.p8 with --key-id and --team-id, or [[keys]] tables in a job file")
        }
        if command.keyID != nil && command.keyFile.isEmpty {
            throw RunFailure.usage("--key-id goes with one --key-file; each [[keys]] entry names its own key-id")
        }
        try KeyList.check(entries)
        let onCommandLine = command.keysFile == nil && entries.count == 1
        return try entries.map { entry in
            let key: SigningKey
            do { key = try SigningKey(contentsOfFile: entry.key.file) } catch let error as SigningKeyError {
                throw RunFailure.usage(onCommandLine ? error.message : "\(entry.origin): \(error.message)")
            }
            return Key(entry: entry, signingKey: key, source: try makeSource(key, entry))
        }
    }

    private static func makeSource(_ key: SigningKey, _ entry: KeyList.Entry) throws -> TokenSource {
        do {
            return try TokenSource(signingKey: key, keyID: ProviderToken.KeyID(entry.key.keyID),
                                   teamID: ProviderToken.TeamID(entry.key.teamID))
        } catch let error as ProviderTokenError {
            throw RunFailure.usage("\(entry.origin): \(error.message)")
        } catch let error as SigningKeyError {
            throw RunFailure.usage("\(entry.origin): \(error.message)")
        }
    }

    /// `--cert-file`/`--cert-key-file` pairs by position, then `--p12-file`s (one password for all).
    private static func loadCertificates(_ command: some CredentialFlags) throws -> [Certificate] {
        guard command.certFile.count == command.certKeyFile.count else {
            throw RunFailure.usage("certificate auth needs both --cert-file and --cert-key-file (or a --p12-file): \(command.certFile.count) --cert-file and \(command.certKeyFile.count) --cert-key-file, paired by position; give one key file per certificate")
        }
        var sources = zip(command.certFile, command.certKeyFile).map { (file: $0, credentials: ClientCredentials.pem(certificateFile: $0, keyFile: $1)) }
        if !command.p12File.isEmpty {
            var password = ""
            if let variable = command.p12PasswordEnv {
                guard let value = ProcessInfo.processInfo.environment[variable] else {
                    throw RunFailure.usage("--p12-password-env \(variable): that environment variable is not set")
                }
                password = value
            }
            sources += command.p12File.map { (file: $0, credentials: ClientCredentials.pkcs12(file: $0, password: password)) }
        }
        var seen: [String: String] = [:]
        return try sources.map { source in
            let identity: TLSIdentity
            do { identity = try source.credentials.load() } catch { throw RunFailure.usage("client certificate: \(error)") }
            if sources.count > 1, let first = seen[identity.certificatePEM] {
                throw RunFailure.usage("\(source.file): the same certificate as \(first); give each certificate once")
            }
            seen[identity.certificatePEM] = source.file
            let claims = identity.pushClaims
            let environment: APNsEnvironment? = claims.development == claims.production ? nil
                : (claims.development ? .sandbox : .production)
            return Certificate(file: source.file, identity: identity, topics: claims.topics, environment: environment)
        }
    }

    /// The mock's view of the keys: each verified with its environment, topics and related key.
    func mockKeys() throws -> [MockTokenKey] {
        try keys.map { key in
            let verifier: TokenVerifier
            do { verifier = try TokenVerifier(signingKey: key.signingKey, keyID: key.source.keyID, teamID: key.source.teamID) } catch {
                throw RunFailure.usage("--endpoint mock: \(key.entry.origin): \(error)")
            }
            return MockTokenKey(verifier: verifier, environment: key.entry.key.environment,
                                topics: key.entry.key.topics.map(Set.init), relatedKeyID: key.entry.key.relatedKeyID)
        }
    }

    /// One `CampaignCredential` per key or certificate, in the order given; each certificate gets a
    /// client context of its own with the run's trust (`trust`).
    func campaignCredentials(trust: TLSTrust?, offersH2: Bool) throws -> [CampaignCredential] {
        var result = keys.map { key in
            CampaignCredential(label: key.entry.key.keyID, environment: key.entry.key.environment,
                               topics: key.entry.key.topics.map(Set.init), relatedKeyID: key.entry.key.relatedKeyID,
                               secret: .token(key.source))
        }
        for certificate in certificates {
            let context: TLSContext
            do {
                context = try TLSContext.client(additionalTrust: trust, identity: certificate.identity, offersH2: offersH2)
            } catch {
                throw RunFailure.usage("\(certificate.file): TLS setup: \(error)")
            }
            result.append(CampaignCredential(label: certificate.identity.label, environment: certificate.environment,
                                             topics: certificate.topics.isEmpty ? nil : Set(certificate.topics),
                                             secret: .certificate(context)))
        }
        return result
    }
}

/// The credential flags that `send` and `channels` share, read by `SendCredentials.load`: the same
/// names, the same checks and messages.
protocol CredentialFlags {
    var keyFile: [String] { get }
    var keyID: String? { get }
    var teamID: String? { get }
    /// `--keys-file`, or a job file's `[[keys]]` (nil where the command has neither).
    var keysFile: String? { get }
    /// `--config`, to name the flag that brought `keysFile` (nil where the command has none).
    var config: String? { get }
    var certFile: [String] { get }
    var certKeyFile: [String] { get }
    var p12File: [String] { get }
    var p12PasswordEnv: String? { get }
}

extension SendCommand: CredentialFlags {}

extension TLSIdentity {
    /// What the certificate says it serves, by Apple's extensions (its apps and environment).
    var pushClaims: PushCertificateClaims {
        PushCertificateClaims(extensionBytes: extensionBytes(oid:), subjectUserID: subjectUserID)
    }
}
