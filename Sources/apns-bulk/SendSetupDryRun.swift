import APNs
import Pipeline
import Transport

extension SendSetup {
    /// `--dry-run`'s offline check of the credentials, as far as they can be checked without
    /// APNs: a signing key has signed a provider token (TokenSource's first), and the key's own
    /// public half must verify it; a client certificate must match its key and be valid today,
    /// or APNs would refuse every connection.
    static func checkDryRun(_ command: SendCommand, tokenSource: TokenSource?, key: SigningKey?,
                            identity: TLSIdentity?) throws {
        if command.resume {
            throw RunFailure.usage("--dry-run with --resume: a dry run sends nothing, so there is no campaign to resume; leave one of them off")
        }
        if let tokenSource, let key {
            do {
                let verifier = try TokenVerifier(signingKey: key, keyID: tokenSource.keyID, teamID: tokenSource.teamID)
                _ = try verifier.verify(tokenSource.current.jwt)
            } catch {
                throw RunFailure.usage("--key-file \(command.keyFile ?? "(generated)"): a provider token it signed does not verify with its own public key (\(error)); give the .p8 key downloaded from Apple")
            }
        }
        guard let identity else { return }
        let file = command.p12File ?? command.certFile ?? "the client certificate"
        guard identity.keyMatchesCertificate else {
            throw RunFailure.usage("\(file): its private key does not belong to its certificate; export the certificate together with its own key")
        }
        let validity = identity.validity
        if validity.expired {
            throw RunFailure.usage("\(file): the certificate expired on \(validity.notAfter) (by this machine's clock); APNs refuses it: renew it in Apple's developer account")
        }
        if validity.notYetValid {
            throw RunFailure.usage("\(file): the certificate is not valid yet by this machine's clock; check the clock, or wait")
        }
    }
}
