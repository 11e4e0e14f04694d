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

    @Test func setsAModificationTime() throws {
        let root = "/tmp/fermata-mtime-\(getpid())-\(MonotonicClock.now())"
        defer { _ = system("rm -rf '\(root)'") }
        try DirectoryEntries.makeDirectories(atPath: root)
        try writeFile(Array("db".utf8), atPath: root + "/file")
        try FileStatus.setModificationTime(1_234_567_890, ofPath: root + "/file")
        #expect(try FileStatus(path: root + "/file").modificationTime == 1_234_567_890)
        #expect(try FileStatus(path: root + "/file").size == 2)
        #expect(throws: SystemCallError.self) { try FileStatus.setModificationTime(1, ofPath: root + "/missing") }
    }

    @Test func anOpenDirectoryDescribesItsEntriesAsTheirPathsDo() throws {
        let root = "/tmp/fermata-opendir-\(getpid())-\(MonotonicClock.now())"
        defer { _ = system("rm -rf '\(root)'") }
        try DirectoryEntries.makeDirectories(atPath: root + "/sub")
        try writeFile(Array("song".utf8), atPath: root + "/a.mp3")
        #expect(symlink("a.mp3", root + "/link.mp3") == 0)
        #expect(symlink("gone", root + "/dangling") == 0)

        let opened = try OpenDirectory(path: root)
        let names = opened.names()
        #expect(Set(names) == Set(try DirectoryEntries.names(in: root)))
        #expect(Set(names) == ["sub", "a.mp3", "link.mp3", "dangling"])
        for name in ["sub", "a.mp3", "link.mp3"] {
            #expect(try opened.status(of: name) == FileStatus(path: root + "/" + name))
            #expect(
                try opened.status(of: name, followLinks: false)
                    == FileStatus(path: root + "/" + name, followLinks: false))
        }
        #expect(try opened.status(of: "link.mp3").kind == .regular)
        #expect(try opened.status(of: "link.mp3", followLinks: false).kind == .symbolicLink)
        #expect(throws: SystemCallError.self) { try opened.status(of: "dangling") }
        #expect(throws: SystemCallError.self) { try opened.status(of: "missing") }
        #expect(throws: SystemCallError.self) { try OpenDirectory(path: root + "/a.mp3") }

        // A sub-directory opened relative to it (a link to one followed) lists what its path lists.
        try writeFile(Array("x".utf8), atPath: root + "/sub/b.mp3")
        #expect(symlink("sub", root + "/sublink") == 0)
        for name in ["sub", "sublink"] {
            let sub = try OpenDirectory(name: name, in: opened.descriptor)
            #expect(sub.names() == ["b.mp3"])
            #expect(try sub.status(of: "b.mp3") == FileStatus(path: root + "/sub/b.mp3"))
        }
        for name in ["a.mp3", "missing", "dangling"] {
            #expect(throws: SystemCallError.self) { try OpenDirectory(name: name, in: opened.descriptor) }
        }
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
