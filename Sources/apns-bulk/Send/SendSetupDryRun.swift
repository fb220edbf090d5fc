import APNs
import Pipeline
import Transport

extension SendSetup {
    /// `--dry-run`'s offline check of the credentials, as far as they can be checked without
    /// APNs: a signing key has signed a provider token (TokenSource's first), and the key's own
    /// public half must verify it; a client certificate must match its key and be valid today,
    /// or APNs would refuse every connection.
    static func checkDryRun(_ command: SendCommand, credentials: SendCredentials) throws {
        if command.resume {
            throw RunFailure.usage("--dry-run with --resume: a dry run sends nothing, so there is no campaign to resume; leave one of them off")
        }
        for key in credentials.keys {
            do {
                let verifier = try TokenVerifier(signingKey: key.signingKey, keyID: key.source.keyID, teamID: key.source.teamID)
                _ = try verifier.verify(key.source.current.jwt)
            } catch {
                throw RunFailure.usage("--key-file \(key.entry.key.file): a provider token it signed does not verify with its own public key (\(error)); give the .p8 key downloaded from Apple")
            }
        }
        for certificate in credentials.certificates {
            let file = certificate.file
            let identity = certificate.identity
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

    /// `--endpoint mock` in a dry run with several credentials: no mock starts, but each
    /// environment one would play gets a stand-in endpoint ("mock:0", never connected to), so the
    /// dry run routes rows as the rehearsal would instead of finding their environment unserved.
    static func dryRunMocks(_ environments: [APNsEnvironment], _ endpoints: inout [Endpoint],
                            _ endpointEnvironments: inout [APNsEnvironment], _ proxies: inout [HTTPProxy?]) {
        for environment in environments {
            endpoints.append(Endpoint(host: "mock", port: 0))
            endpointEnvironments.append(environment)
            proxies.append(nil)
        }
    }
}
