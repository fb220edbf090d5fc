import Testing
@testable import Transport

struct EndpointTests {
    @Test(arguments: [
        ("production", "api.push.apple.com", 443),
        ("sandbox", "api.sandbox.push.apple.com", 443),
        ("api.push.apple.com:2197", "api.push.apple.com", 2197),
        ("127.0.0.1:8443", "127.0.0.1", 8443),
        ("localhost", "localhost", 443),
        ("[::1]:443", "::1", 443),
        ("[2001:db8::5]", "2001:db8::5", 443),
        ("  mock-host:9000 ", "mock-host", 9000),
    ])
    func parsesEndpointForms(text: String, host: String, port: Int) throws {
        let endpoint = try Endpoint(parsing: text)
        #expect(endpoint == Endpoint(host: host, port: UInt16(port)))
    }

    @Test(arguments: [
        ("", "it is empty"),
        ("::1", "an IPv6 address goes in brackets, e.g. [::1]:443"),
        ("host:0", "the port must be a number from 1 to 65535"),
        ("host:70000", "the port must be a number from 1 to 65535"),
        ("host:", "the port must be a number from 1 to 65535"),
        ("host:+443", "the port must be a number from 1 to 65535"),
        (":443", "the host is missing"),
        ("[::1", "the '[' of an IPv6 address is never closed"),
        ("[example.com]:443", "'example.com' in brackets is not an IPv6 address"),
        ("[::1]443", "expected ':PORT' after ']'"),
        ("bad host:443", "'bad host' is not a host name or IP address"),
    ])
    func rejectsMalformedEndpoints(text: String, reason: String) {
        #expect(throws: EndpointError(text: text, reason: reason)) { try Endpoint(parsing: text) }
    }

    @Test func printsWithBracketsForIPv6AndKnowsLiterals() throws {
        #expect(try Endpoint(parsing: "[::1]:443").description == "[::1]:443")
        #expect(Endpoint.production.description == "api.push.apple.com:443")
        #expect(try Endpoint(parsing: "[::1]:443").isIPAddress)
        #expect(try Endpoint(parsing: "127.0.0.1:1").isIPAddress)
        #expect(!Endpoint.sandbox.isIPAddress)
        #expect(try Endpoint(parsing: "mock:1").description.contains("mock:1"))
    }

    @Test func resolvingLocalhostDeliversAddressesOnTheReactorThreadLater() throws {
        try withRunningReactor { reactor in
            let delivered = TransportAwaited<(onReactor: Bool, addresses: [SocketAddress], callReturnedFirst: Bool)>()
            reactor.execute {
                let callReturned = Shared(false)
                Endpoint(host: "localhost", port: 8443).resolve(on: reactor) { result in
                    let addresses = (try? result.get()) ?? []
                    delivered.fulfil((reactor.isCurrent, addresses, callReturned.withLock { $0 }))
                }
                callReturned.withLock { $0 = true }
            }
            let result = try #require(delivered.wait())
            #expect(result.onReactor)
            #expect(result.callReturnedFirst)
            #expect(!result.addresses.isEmpty)
            #expect(result.addresses.allSatisfy { $0.port == 8443 && ($0.ip == "127.0.0.1" || $0.ip == "::1") })
            #expect(Set(result.addresses).count == result.addresses.count)
        }
    }

    @Test func literalAddressesResolveToThemselves() throws {
        #expect(try Endpoint(host: "::1", port: 443).resolveBlocking() == [SocketAddress(ip: "::1", port: 443)!])
    }
}

@Suite struct EndpointMistakeTests {
    @Test func aURLIsExplainedAsHostAndPortWithNoScheme() {
        #expect(throws: EndpointError.self) { try Endpoint(parsing: "https://127.0.0.1:443") }
        do {
            _ = try Endpoint(parsing: "https://api.push.apple.com/3/device")
            Issue.record("a URL was accepted")
        } catch {
            #expect(error.reason.contains("no scheme"))
            #expect(error.reason.contains("api.push.apple.com"))
            #expect(!error.reason.contains("brackets"))
        }
    }

    @Test func aNameThatDoesNotExistIsADefiniteLookupFailure() {
        do {
            _ = try Endpoint(host: "no-such-host.invalid", port: 443).resolveBlocking()
            Issue.record("no-such-host.invalid resolved")
        } catch {
            // .invalid is NXDOMAIN by RFC 6761: a definite answer, not a resolver that is down.
            guard case .nameNotFound(let host, _) = error else {
                Issue.record("\(error) is not a definite answer")
                return
            }
            #expect(host == "no-such-host.invalid")
        }
    }
}
