// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Testing

@testable import Posix

struct ProcessFileTests {
    @Test func makesDirectoriesWritesAndAppends() throws {
        let root = "/tmp/fermata-posix-\(getpid())-\(MonotonicClock.now())"
        defer { _ = system("rm -rf '\(root)'") }
        try DirectoryEntries.makeDirectories(atPath: root + "/a/b")
        try DirectoryEntries.makeDirectories(atPath: root + "/a/b")
        #expect(try FileStatus(path: root + "/a/b").kind == .directory)

        try writeFile(Array("one\n".utf8), atPath: root + "/a/file")
        let log = try FileDescriptor.openForAppending(root + "/a/file")
        try log.writeAll("two\n".utf8)
        log.close()
        #expect(try readFile(atPath: root + "/a/file") == Array("one\ntwo\n".utf8))
        try writeFile(Array("three\n".utf8), atPath: root + "/a/file")
        #expect(try readFile(atPath: root + "/a/file") == Array("three\n".utf8))

        try writeFile([], atPath: root + "/plain")
        #expect(throws: SystemCallError.self) { try DirectoryEntries.makeDirectories(atPath: root + "/plain/x") }
        #expect(throws: SystemCallError.self) { try DirectoryEntries.makeDirectories(atPath: root + "/plain") }
    }

    @Test func readsTheEnvironment() {
        setenv("FERMATA_TEST_VARIABLE", "a=b", 1)
        defer { unsetenv("FERMATA_TEST_VARIABLE") }
        #expect(ProcessEnvironment.variables()["FERMATA_TEST_VARIABLE"] == "a=b")
    }

    @Test func findsHomeDirectories() {
        #expect(UserDatabase.homeDirectory(ofUser: "root") == "/root")
        #expect(UserDatabase.homeDirectory(ofUser: "no_such_user_fermata") == nil)
        #expect(UserDatabase.homeDirectoryOfCurrentUser()?.hasPrefix("/") == true)
    }
}
