import Testing
@testable import Transport

/// `--proxy`, `HTTPS_PROXY` and `NO_PROXY` read as curl reads them, and the CONNECT request and
/// the reading of a proxy's answer, without a network.
@Suite struct ProxySettingsTests {
    @Test func aProxyURLGivesHostPortAndPercentDecodedCredentials() throws {
        let proxy = try HTTPProxy(parsing: "http://al%40ice:p%3Aw%25d@proxy.example.com:3128/")
        #expect(proxy.endpoint == Endpoint(host: "proxy.example.com", port: 3128))
        #expect(proxy.username == "al@ice")
        // Basic base64("al@ice:p:w%d"), checked against Python's base64.b64encode.
        #expect(proxy.authorization == "Basic YWxAaWNlOnA6dyVk")
        #expect(proxy.description == "http://al@ice:***@proxy.example.com:3128")
        let bare = try HTTPProxy(parsing: "10.0.0.1:8080")
        #expect(bare.endpoint == Endpoint(host: "10.0.0.1", port: 8080))
        #expect(bare.authorization == nil)
        #expect(try HTTPProxy(parsing: "http://[::1]:3128").endpoint == Endpoint(host: "::1", port: 3128))
    }

    @Test func noWayOfPrintingAProxyShowsItsPassword() throws {
        let proxy = try HTTPProxy(parsing: "http://alice:hunter2@proxy:3128")
        var dumped = ""
        dump(proxy, to: &dumped)
        var configuration = try ClientConnection.Configuration(
            endpoint: .production, address: #require(SocketAddress(ip: "10.0.0.1", port: 3128)),
            tls: TLSContext.client(), maxStreams: 1, singleStreamUntilAuthorized: true)
        configuration.proxy = proxy
        for text in ["\(proxy)", String(reflecting: proxy), dumped, "\(configuration)", String(reflecting: configuration)] {
            #expect(!text.contains("hunter2"), "\(text)")
        }
        #expect("\(proxy)" == "http://alice:***@proxy:3128")
    }

    @Test func base64MatchesRFC4648Vectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
                       "foobar": "Zm9vYmFy"]
        for (input, expected) in vectors {
            #expect(HTTPProxy.base64(Array(input.utf8)) == expected, "\(input)")
        }
    }

    @Test(arguments: [
        ("https://proxy:3128", "https://"),
        ("socks5://proxy:1080", "socks5://"),
        ("http://proxy", "the port is missing"),
        ("http://proxy:3128/path", "no path"),
        ("http://proxy:0", "port"),
        ("http://:pw@proxy:3128", "user name"),
        ("http://user:bad%zz@proxy", "%-escape"),
    ])
    func aBadProxyURLIsRefusedSayingWhy(text: String, expected: String) {
        #expect(throws: HTTPProxyError.self) { try HTTPProxy(parsing: text) }
        do {
            _ = try HTTPProxy(parsing: text)
        } catch {
            #expect(error.description.contains(expected), "\(error)")
        }
    }

    @Test func aRefusedURLNeverShowsItsPassword() {
        do {
            _ = try HTTPProxy(parsing: "https://alice:hunter2@proxy:3128")
            Issue.record("https:// was accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("alice:***@proxy:3128"))
        }
        let settingsError = #expect(throws: ProxySettingsError.self) {
            try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: ["HTTPS_PROXY": "http://bob:s3cret@proxy"])
        }
        #expect(settingsError?.description.contains("HTTPS_PROXY") == true)
        #expect(settingsError?.description.contains("s3cret") == false)
    }

    @Test func lowerCaseHTTPSProxyWinsAndTheFlagWinsOverBoth() throws {
        let environment = ["https_proxy": "http://lower:1111", "HTTPS_PROXY": "http://upper:2222"]
        let fromEnvironment = try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: environment)
        #expect(fromEnvironment.proxy?.endpoint.host == "lower")
        #expect(fromEnvironment.source == "https_proxy")
        let upperOnly = try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: ["HTTPS_PROXY": "http://upper:2222"])
        #expect(upperOnly.proxy?.endpoint.host == "upper")
        // An empty lower-case value counts as unset, as curl reads it.
        let emptyLower = try ProxySettings(proxyFlag: nil, noProxyFlag: nil,
                                           environment: ["https_proxy": "", "HTTPS_PROXY": "http://upper:2222"])
        #expect(emptyLower.proxy?.endpoint.host == "upper")
        let flag = try ProxySettings(proxyFlag: "http://flag:3333", noProxyFlag: nil, environment: environment)
        #expect(flag.proxy?.endpoint.host == "flag")
        let direct = try ProxySettings(proxyFlag: "", noProxyFlag: nil, environment: environment)
        #expect(direct.proxy == nil)
        // http_proxy is for plain HTTP: an HTTPS client ignores it, as curl does.
        let plainOnly = try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: ["http_proxy": "http://p:1"])
        #expect(plainOnly.proxy == nil)
    }

    @Test func noProxyComesFromTheFlagOrTheEnvironmentLowerCaseFirst() throws {
        let apns = Endpoint.production
        let environment = ["https_proxy": "http://p:1", "no_proxy": "push.apple.com", "NO_PROXY": "example.com"]
        #expect(try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: environment).proxy(for: apns) == nil)
        let upper = ["https_proxy": "http://p:1", "NO_PROXY": "apple.com"]
        #expect(try ProxySettings(proxyFlag: nil, noProxyFlag: nil, environment: upper).proxy(for: apns) == nil)
        // --noproxy '' proxies everything although NO_PROXY names the host.
        #expect(try ProxySettings(proxyFlag: nil, noProxyFlag: "", environment: environment).proxy(for: apns) != nil)
        // NO_PROXY applies to --proxy too.
        #expect(try ProxySettings(proxyFlag: "http://q:2", noProxyFlag: nil, environment: environment).proxy(for: apns) == nil)
    }

    @Test func noProxyMatchesAsCurlDoes() {
        func bypassed(_ list: String, _ host: String, port: UInt16 = 443) -> Bool {
            ProxyBypass(list: list).matches(Endpoint(host: host, port: port))
        }
        // curl's own examples: a name matches itself and its subdomains, not a longer name.
        #expect(bypassed("ample.com", "ample.com"))
        #expect(bypassed("ample.com", "ample.com", port: 80))
        #expect(bypassed("ample.com", "www.ample.com"))
        #expect(!bypassed("ample.com", "www.example.com"))
        #expect(!bypassed("ample.com", "ample.com.org"))
        #expect(bypassed(".example.com", "example.com"))
        #expect(bypassed(".example.com", "api.example.com"))
        #expect(bypassed("EXAMPLE.com.", "Api.Example.COM."))
        #expect(bypassed("*", "anything.at.all"))
        #expect(!bypassed("*.example.com", "api.example.com"), "only a lone * is a wildcard")
        #expect(bypassed("foo.org, bar.org  api.push.apple.com", "api.push.apple.com"), "commas and spaces separate")
        // IPs: exact or CIDR, IPv6 without brackets; names are not resolved to decide.
        #expect(bypassed("127.0.0.1", "127.0.0.1"))
        #expect(!bypassed("127.0.0.1", "127.0.0.2"))
        #expect(bypassed("10.0.0.0/8", "10.20.30.40"))
        #expect(!bypassed("10.0.0.0/8", "11.0.0.1"))
        #expect(bypassed("::1", "::1"))
        #expect(bypassed("fd00::/8", "fd12:3456::1"))
        #expect(!bypassed("fd00::/8", "fe80::1"))
        #expect(!bypassed("127.0.0.1", "localhost"))
        // Ports: an entry with one matches that port only.
        #expect(bypassed("api.push.apple.com:443", "api.push.apple.com"))
        #expect(!bypassed("api.push.apple.com:2197", "api.push.apple.com"))
        #expect(bypassed("127.0.0.1:2197", "127.0.0.1", port: 2197))
        #expect(bypassed("[::1]:2197", "::1", port: 2197))
        #expect(!bypassed("", "api.push.apple.com"))
    }

    @Test func theConnectRequestNamesTheTargetAndCarriesBasicCredentials() throws {
        let proxy = try HTTPProxy(parsing: "http://alice:s3cret@proxy:3128")
        let request = String(decoding: ProxyTunnel.request(for: .production, proxy: proxy), as: UTF8.self)
        #expect(request == "CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n"
            + "Proxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n")
        let anonymous = String(decoding: ProxyTunnel.request(for: Endpoint(host: "::1", port: 2197),
                                                             proxy: HTTPProxy(endpoint: .production)), as: UTF8.self)
        #expect(anonymous == "CONNECT [::1]:2197 HTTP/1.1\r\nHost: [::1]:2197\r\n\r\n")
    }

    @Test func theProxysAnswerIsJudgedByItsStatusLine() throws {
        let proxy = HTTPProxy(endpoint: Endpoint(host: "proxy", port: 3128))
        let withUser = try HTTPProxy(parsing: "http://alice:pw@proxy:3128")
        func judge(_ text: String, _ proxy: HTTPProxy = proxy, closed: Bool = false) -> ProxyTunnel.Verdict {
            ProxyTunnel.judge(head: Array(text.utf8), closed: closed, proxy: proxy, target: .production)
        }
        #expect(judge("HTTP/1.1 200 Connection established\r\n\r\n") == .established)
        #expect(judge("HTTP/1.0 200 OK\r\nProxy-agent: x\r\n\r\n") == .established)
        #expect(judge("HTTP/1.1 200 Conn") == .incomplete, "incomplete: wait for more")
        #expect(judge("HTTP/1.1 200 Conn", closed: true) == .failed(.closedEarly(proxy: "proxy:3128")))
        let required = "HTTP/1.1 407 Proxy Authentication Required"
        #expect(judge(required + "\r\n\r\n") == .failed(.wantsCredentials(proxy: "proxy:3128", statusLine: required)))
        #expect(judge(required + "\r\n\r\n", withUser)
            == .failed(.refusedCredentials(proxy: "proxy:3128", username: "alice", statusLine: required)))
        #expect(judge("HTTP/1.0 401 Unauthorized\r\n\r\n", withUser)
            == .failed(.refusedCredentials(proxy: "proxy:3128", username: "alice", statusLine: "HTTP/1.0 401 Unauthorized")))
        #expect(judge("HTTP/1.1 403 Access violation\r\nContent-Length: 0\r\n\r\n")
            == .failed(.refused(proxy: "proxy:3128", target: "api.push.apple.com:443", statusLine: "HTTP/1.1 403 Access violation")))
        #expect(judge("SSH-2.0-OpenSSH_9.2\r\n") == .failed(.notHTTP(proxy: "proxy:3128", answer: "\"SSH-2.0-OpenSSH_9.2\"")))
        #expect(judge("\u{15}\u{03}\u{03}\u{00}\u{02}") == .failed(.notHTTP(proxy: "proxy:3128", answer: "the bytes 15 03 03 00 02")))
        #expect(judge("HTTP/1.1 200 OK\r\n\r\n\u{16}\u{03}") != .established, "bytes after a 2xx head are refused")
    }
}
