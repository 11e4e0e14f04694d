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
    ])
    func parses(text: String, expected: ListenAddress) throws {
        #expect(try ListenAddress(parsing: text, defaultPort: 6600, home: "/home/u") == expected)
    }

    @Test(arguments: ["", "host:0", "host:99999", "host:x", "[::1", "[::1]x"])
    func rejects(text: String) {
        #expect(throws: ListenAddressError.self) { try ListenAddress(parsing: text, defaultPort: 6600, home: "/") }
    }
}
