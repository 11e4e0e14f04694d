// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Server

@Suite struct AddURITests {
    @Test(arguments: [
        ("a//b.mp3", true), ("//", true), ("a/b//", true), ("a/b/c.mp3", false), ("", false), ("/", false),
        ("a/ /b", false), ("é//x", true),
    ])
    func doubleSlash(uri: String, expected: Bool) {
        #expect(QueueCommands.containsDoubleSlash(uri) == expected)
    }
}
