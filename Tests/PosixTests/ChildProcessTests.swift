// SPDX-License-Identifier: GPL-3.0-or-later

import Posix
import Testing

@Suite struct ChildProcessTests {
    @Test func returnsWhatTheProgramPrinted() throws {
        #expect(try ChildProcess.output(of: "/bin/echo", arguments: ["echo", "a b", "c"]) == Array("a b c\n".utf8))
        // Its standard input is empty.
        #expect(try ChildProcess.output(of: "/bin/cat", arguments: ["cat"]) == [])
        #expect(try ChildProcess.output(of: "/bin/echo", arguments: ["echo", "abcdef"], limit: 3) == Array("abc".utf8))
    }

    @Test func aFailureOrAMissingProgramThrows() {
        #expect(throws: SystemCallError.self) { try ChildProcess.output(of: "/bin/false", arguments: ["false"]) }
        #expect(throws: SystemCallError.self) { try ChildProcess.output(of: "/nonexistent/x", arguments: ["x"]) }
    }
}
