// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Testing

@testable import Configuration

struct ConfigIncludeTests {
    private func failure(_ path: String) -> ConfigError? {
        do {
            _ = try ConfigFile(contentsOf: path)
            return nil
        } catch {
            return error
        }
    }

    @Test func splicesARelativeIncludeInPlace() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("conf.d/extra.conf", "# extra\nuser \"mpd\"\ndecoder {\nplugin \"mad\"\n}\n")
        let main = try directory.write("mpd.conf", "port \"1\"\ninclude \"conf.d/extra.conf\"\ngroup \"audio\"\n")

        let file = try ConfigFile(contentsOf: main)
        let extra = directory.path + "/conf.d/extra.conf"
        #expect(
            file.parameters == [
                ConfigParameter(name: "port", value: "1", file: main, line: 1),
                ConfigParameter(name: "user", value: "mpd", file: extra, line: 2),
                ConfigParameter(name: "group", value: "audio", file: main, line: 3),
            ])
        #expect(file.blocks.map(\.location) == [ConfigLocation(file: extra, line: 3)])
        #expect(file.blocks.first?.params.first?.location == ConfigLocation(file: extra, line: 4))
    }

    @Test func includesAnAbsolutePathAndNestedRelativeIncludes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inner = try directory.write("a/b/inner.conf", "user \"inner\"\n")
        try directory.write("a/middle.conf", "include \"b/inner.conf\"\n")
        let main = try directory.write("main.conf", "include \"\(directory.path)/a/middle.conf\"\n")
        let file = try ConfigFile(contentsOf: main)
        #expect(file.parameters == [ConfigParameter(name: "user", value: "inner", file: inner, line: 1)])
    }

    @Test func parsingTextResolvesIncludesAgainstTheGivenPath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("extra.conf", "user \"x\"\n")
        let file = try ConfigFile(parsing: "include \"extra.conf\"\n", path: directory.path + "/virtual.conf")
        #expect(file.parameter(named: "user")?.value == "x")
    }

    @Test func expandsWildcardsInTheLastComponentInNameOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("d/20-b.conf", "user \"b\"\n")
        try directory.write("d/10-a.conf", "user \"a\"\n")
        try directory.write("d/.hidden.conf", "user \"hidden\"\n")
        try directory.write("d/30-c.txt", "user \"txt\"\n")
        try directory.write("d/x.conf", "user \"x\"\n")
        let cases: [(String, [String])] = [
            ("d/*.conf", ["hidden", "a", "b", "x"]),
            ("d/??-?.conf", ["a", "b"]),
            ("d/*-*", ["a", "b", "txt"]),
            ("d/?.conf", ["x"]),
            ("d/*.none", []),
            ("d/[x].conf", []),
        ]
        for (pattern, users) in cases {
            for directive in ["include", "include_optional"] {
                if pattern == "d/[x].conf" && directive == "include" { continue }
                let main = try directory.write("main.conf", "\(directive) \"\(pattern)\"\n")
                let file = try ConfigFile(contentsOf: main)
                #expect(file.parameters.map(\.value) == users, "\(directive) \(pattern)")
            }
        }
    }

    @Test func treatsBracketsAndWildcardsInDirectoriesLiterally() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("d/a.conf", "user \"a\"\n")
        let bracket = try directory.write("main.conf", "include \"d/[a].conf\"\n")
        let missing = ": No such file or directory"
        #expect(self.failure(bracket)?.message == "Failed to open '\(directory.path)/d/[a].conf'" + missing)
        let star = try directory.write("main.conf", "include \"*/a.conf\"\n")
        #expect(self.failure(star)?.message == "Failed to open '\(directory.path)/*/a.conf'" + missing)
    }

    @Test func reportsAMissingIncludeAtTheIncludeLine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let main = try directory.write("mpd.conf", "port \"1\"\ninclude \"missing.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: main, line: 2))
        #expect(error.message == "Failed to open '\(directory.path)/missing.conf': No such file or directory")
        #expect(error.description == "\(main):2: \(error.message)")
    }

    @Test func toleratesAMissingOptionalInclude() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let main = try directory.write(
            "mpd.conf", "include_optional \"missing.conf\"\ninclude_optional \"nodir/*.conf\"\nport \"1\"\n")
        #expect(try ConfigFile(contentsOf: main).parameters.map(\.value) == ["1"])
    }

    @Test func reportsAMissingWildcardDirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let main = try directory.write("mpd.conf", "include \"nodir/*.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: main, line: 1))
        #expect(error.message == "Failed to open \(directory.path)/nodir: No such file or directory")
    }

    @Test(arguments: ["include", "include_optional"])
    func refusesToIncludeADirectory(directive: String) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.makeDirectory("sub")
        let main = try directory.write("mpd.conf", "\(directive) \"sub\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: main, line: 1))
        #expect(error.message == "Failed to read from \(directory.path)/sub: Is a directory")
    }

    @Test func locatesAnErrorInsideAnIncludedFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inner = try directory.write("inner.conf", "\nbogus \"x\"\n")
        let middle = try directory.write("middle.conf", "# middle\ninclude \"inner.conf\"\n")
        let main = try directory.write("mpd.conf", "port \"1\"\n\ninclude \"middle.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: inner, line: 2))
        #expect(error.message == "unrecognized parameter: bogus")
        #expect(
            error.includedFrom == [ConfigLocation(file: middle, line: 2), ConfigLocation(file: main, line: 3)])
        #expect(
            error.description
                == "\(inner):2: unrecognized parameter: bogus (included from \(middle):2, \(main):3)")
    }

    @Test func rejectsASingleBlockRepeatedAcrossFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inner = try directory.write("inner.conf", "input_cache {\n}\n")
        let main = try directory.write("mpd.conf", "\n\ninput_cache {\n}\ninclude \"inner.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: inner, line: 1))
        #expect(
            error.message
                == "config parameter \"input_cache\" is first defined on line 3 of \(main) and redefined on line 1")
    }

    @Test func rejectsTheSameSingleBlockFileIncludedTwice() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("a.conf", "resampler {\n}\n")
        let main = try directory.write("mpd.conf", "include \"a.conf\"\ninclude \"a.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.message == "config parameter \"resampler\" is first defined on line 1 and redefined on line 1")
        #expect(error.includedFrom == [ConfigLocation(file: main, line: 2)])
    }

    @Test func allowsTheSameFileTwiceWhenNothingClashes() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("a.conf", "bind_to_address \"x\"\n")
        let main = try directory.write("mpd.conf", "include \"a.conf\"\ninclude \"a.conf\"\n")
        #expect(try ConfigFile(contentsOf: main).parameters.count == 2)
    }

    @Test func rejectsAFileIncludingItself() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let main = try directory.write("mpd.conf", "port \"1\"\ninclude \"mpd.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: main, line: 2))
        #expect(error.message == "include cycle: '\(directory.path)/mpd.conf' is already being read")
    }

    @Test func rejectsAnIncludeCycleThroughOtherFilesAndLinks() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let b = try directory.write("b.conf", "include \"./sub/../a.conf\"\n")
        try directory.write("a.conf", "include \"b.conf\"\n")
        try directory.makeDirectory("sub")
        try FileManager.default.createSymbolicLink(
            atPath: directory.path + "/link.conf", withDestinationPath: directory.path + "/a.conf")
        let main = try directory.write("mpd.conf", "include \"link.conf\"\n")
        let error = try #require(self.failure(main))
        #expect(error.location == ConfigLocation(file: b, line: 1))
        #expect(error.message.hasPrefix("include cycle: "))
    }

    @Test func boundsTheIncludeDepth() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let limit = ConfigFile.maximumIncludeDepth
        for level in 1...limit + 1 {
            try directory.write("\(level).conf", "include_optional \"\(level + 1).conf\"\n")
        }
        try directory.write("\(limit + 2).conf", "user \"deep\"\n")
        // 1.conf is the main file; it reaches (limit + 1).conf through `limit` nested includes.
        try directory.write("\(limit + 1).conf", "user \"deepest allowed\"\n")
        #expect(try ConfigFile(contentsOf: directory.path + "/1.conf").parameters.map(\.value) == ["deepest allowed"])

        try directory.write("\(limit + 1).conf", "include \"\(limit + 2).conf\"\n")
        let error = try #require(self.failure(directory.path + "/1.conf"))
        #expect(error.location == ConfigLocation(file: directory.path + "/\(limit + 1).conf", line: 1))
        #expect(error.message == "too many nested includes (more than \(limit))")
        #expect(error.includedFrom.count == limit)
    }

    @Test func reportsAMissingOrUnreadableMainFileWithoutALine() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.path + "/none.conf"
        let error = try #require(self.failure(missing))
        #expect(error.location == ConfigLocation(file: missing, line: 0))
        #expect(error.description == "\(missing): Failed to open '\(missing)': No such file or directory")

        let sub = try directory.makeDirectory("sub")
        #expect(self.failure(sub)?.message == "Failed to read from \(sub): Is a directory")
    }

    // MARK: - Pattern helpers

    @Test(arguments: [
        ("/etc/mpd.conf", "/etc"),
        ("/mpd.conf", "/"),
        ("mpd.conf", "."),
        ("conf/mpd.conf", "conf"),
    ])
    func findsTheIncludingDirectory(path: String, directory: String) {
        #expect(ConfigIncludePattern.directory(of: path) == directory)
    }

    @Test func joinsRelativePatternsToTheIncludingDirectory() {
        #expect(ConfigIncludePattern("x.conf", includingFile: "mpd.conf").path == "./x.conf")
        #expect(ConfigIncludePattern("x.conf", includingFile: "/mpd.conf").path == "/x.conf")
        #expect(ConfigIncludePattern("d/x.conf", includingFile: "/etc/mpd.conf").path == "/etc/d/x.conf")
        #expect(ConfigIncludePattern("/abs.conf", includingFile: "/etc/mpd.conf").path == "/abs.conf")
        #expect(ConfigIncludePattern("~/x.conf", includingFile: "/etc/mpd.conf").path == "/etc/~/x.conf")
    }

    @Test(arguments: [
        ("a.conf", "*.conf", true),
        (".conf", "*.conf", true),
        ("a.conf", "*", true),
        ("", "*", true),
        ("a.conf", "?.conf", true),
        ("ab.conf", "?.conf", false),
        ("a.confx", "*.conf", false),
        ("abcabc", "*abc", true),
        ("aXbXc", "a*b*c", true),
        ("aXbX", "a*b*c", false),
        ("a.conf", "a.conf", true),
        ("b.conf", "a.conf", false),
        ("a", "[a]", false),
        ("été.conf", "?té.conf", true),
    ])
    func matchesWildcards(name: String, pattern: String, matches: Bool) {
        #expect(ConfigIncludePattern.matches(Array(name), Array(pattern)) == matches)
    }
}
