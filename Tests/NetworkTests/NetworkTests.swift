// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Network

struct ListenAddressTests {
    @Test(arguments: [
        ("any", ListenAddress.any(port: 6600)),
        ("127.0.0.1", .host("127.0.0.1", port: 6600)),
        ("127.0.0.1:6602", .host("127.0.0.1", port: 6602)),
        ("localhost:7000", .host("localhost", port: 7000)),
        ("::1", .host("::1", port: 6600)),
        ("[::1]:6602", .host("::1", port: 6602)),
        ("[::1]", .host("::1", port: 6600)),
        ("/run/mpd/socket", .unix(path: "/run/mpd/socket")),
        ("~/.mpd/socket", .unix(path: "/home/u/.mpd/socket")),
        ("@fermata", .abstract(name: "fermata")),
        ("::", .host("::", port: 6600)),
        ("fe80::1%lo:6602", .host("fe80::1%lo", port: 6602)),
        ("::1:6602", .host("::1:6602", port: 6600)),
        ("*:6602", .host("*", port: 6602)),
        ("127.0.0.1:0", .host("127.0.0.1", port: 0)),
    ])
    func parses(text: String, expected: ListenAddress) throws {
        #expect(try ListenAddress(parsing: text, defaultPort: 6600, home: "/home/u") == expected)
    }

    /// As `mpd`'s `ExtractHost` and `Resolve` fail (their messages are compared with `mpd`'s in conformance).
    @Test(arguments: [
        ("", ListenAddressError.extractHost), ("[::1", .extractHost), ("[]:6600", .extractHost),
        ("_bad", .extractHost), ("[::1]x", .garbageAfterHost), ("host name", .garbageAfterHost),
        (String(repeating: "h", count: 256), .hostTooLong),
        ("127.0.0.1:abc", .resolve("Failed to resolve '127.0.0.1':'abc': Servname not supported for ai_socktype")),
    ])
    func rejects(text: String, error: ListenAddressError) {
        #expect(throws: error) { try ListenAddress(parsing: text, defaultPort: 6600, home: "/") }
    }

    /// A port that is no number from 1 to 65535 is what `getaddrinfo` makes of it, as for `mpd`.
    @Test func aServiceNameIsResolved() throws {
        let parsed = try ListenAddress(parsing: "127.0.0.1:65536", defaultPort: 6600, home: "/")
        #expect(parsed == .host("127.0.0.1", port: 0))
    }

    @Test func streamOutputAddressesTakeTheirPortAndBindToAddress() throws {
        func output(_ bind: String?, _ port: UInt32?, zero: Bool = false) throws(ListenAddressError) -> ListenAddress {
            try ListenAddress.output(
                bindToAddress: bind, port: port, defaultPort: 1704, allowsPortZero: zero, home: "/home/u")
        }
        #expect(try output(nil, nil) == .any(port: 1704))
        #expect(try output("127.0.0.1", 1705) == .host("127.0.0.1", port: 1705))
        #expect(try output("127.0.0.1:1706", 1705) == .host("127.0.0.1", port: 1706))
        // Port 0 (the system's pick) only with an address, as mpd's AddHost takes it and its AddPort does not.
        #expect(try output("127.0.0.1", 0, zero: true) == .host("127.0.0.1", port: 0))
        #expect(throws: ListenAddressError.invalidPort) { try output(nil, 0, zero: true) }
        #expect(throws: ListenAddressError.invalidPort) { try output("any", 0, zero: true) }
        #expect(try output(nil, 65535) == .any(port: 65535))
        for bad: UInt32 in [0, 65536, .max] {
            #expect(throws: ListenAddressError.invalidPort) { try output(nil, bad) }
        }
        #expect(ListenAddressError.invalidPort.description == "Invalid TCP port")
    }
}
