// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Testing

/// `mpd`'s warnings about the lines of the used blocks nothing read: its words, the order of its block kinds, the
/// reading order within a kind, and the lines `Settings` itself leaves unread.
@Suite struct BlockCheckTests {
    static let path = "/etc/mpd.conf"

    private func settings(_ text: String) throws -> Settings {
        try Settings(file: ConfigFile(parsing: text, path: Self.path), environment: ["HOME": "/home/u"])
    }

    private func block(_ name: String, file: String = Self.path, line: Int, _ keys: [String]) -> ConfigBlock {
        ConfigBlock(
            name: name, file: file, line: line,
            params: keys.enumerated().map { ConfigParameter(name: $1, value: "1", file: file, line: line + 1 + $0) })
    }

    @Test func warnsInTheOrderOfMpdsBlockKindsThenOfTheBlocks() throws {
        let blocks = [
            self.block("neighbors", line: 1, ["plugin", "n"]),
            self.block("playlist_plugin", line: 5, ["name", "p"]),
            self.block("decoder", line: 9, ["plugin", "d1"]),
            self.block("filter", line: 13, ["plugin", "f"]),
            self.block("audio_output", line: 17, ["type", "o"]),
            self.block("decoder", line: 21, ["plugin", "d2", "d3"]),
            self.block("database", line: 26, ["path", "x"]),
            self.block("resampler", line: 30, ["plugin", "r"]),
            self.block("input", line: 34, ["plugin", "i"]),
        ]
        let check = BlockCheck(blocks)
        // Reported in any order, as the program's parts read their blocks.
        let unread = blocks.flatMap { $0.params.filter { !["plugin", "name", "type", "path"].contains($0.name) } }
        #expect(
            check.warnings(unread: unread.reversed()) == [
                "option 'o' on line 19 was not recognized", "option 'd1' on line 11 was not recognized",
                "option 'd2' on line 23 was not recognized", "option 'd3' on line 24 was not recognized",
                "option 'i' on line 36 was not recognized", "option 'p' on line 7 was not recognized",
                "option 'r' on line 32 was not recognized", "option 'f' on line 15 was not recognized",
                "option 'x' on line 28 was not recognized", "option 'n' on line 3 was not recognized",
            ])
    }

    @Test func blocksOfAKindKeepTheirReadingOrderAcrossIncludedFiles() {
        // An included file's block read first, though its line is later than the main file's.
        let included = self.block("decoder", file: "/etc/mpd.d/a.conf", line: 40, ["plugin", "late"])
        let main = self.block("decoder", line: 2, ["plugin", "early"])
        let check = BlockCheck([included, main])
        #expect(
            check.warnings(unread: [main.params[1], included.params[1]]) == [
                "option 'late' on line 42 was not recognized", "option 'early' on line 4 was not recognized",
            ])
    }

    @Test func onlyTheReportedLinesOfCheckedBlocksAreWarnedAbout() {
        let output = self.block("audio_output", line: 1, ["type", "a", "b"])
        let other = ConfigParameter(name: "z", value: "1", file: Self.path, line: 99)
        // A top-level line or a block kind mpd does not know is not a block line it checks.
        let unknown = self.block("nosuch", line: 10, ["k"])
        let check = BlockCheck([output, unknown])
        #expect(check.blocks == [output])
        #expect(
            check.warnings(unread: [output.params[2], other, unknown.params[0]]) == [
                "option 'b' on line 4 was not recognized"
            ])
        #expect(BlockCheck().warnings(unread: [other]).isEmpty)
    }

    @Test func settingsReportTheUnreadLinesOfTheDatabaseResamplerAndNeighborsBlocks() throws {
        let settings = try self.settings(
            """
            neighbors {
              plugin "udisks"
              foo "1"
            }
            database {
              plugin "simple"
              path "/var/lib/mpd/db"
              compress "no"
              cache_directory "/var/cache/mpd"
              hide_playlist_targets "yes"
              bar "1"
            }
            resampler {
              plugin "soxr"
              quality "high"
              baz "1"
            }
            input_cache {
              size "1 MB"
              qux "1"
            }
            """)
        // mpd reads input_cache without marking it used: its lines are never warned about.
        #expect(
            settings.blockCheck.warnings(unread: settings.unread) == [
                "option 'baz' on line 16 was not recognized", "option 'bar' on line 11 was not recognized",
                "option 'foo' on line 3 was not recognized",
            ])
        #expect(!settings.warnings.contains { $0.contains("was not recognized") })
    }

    @Test func anotherDatabasePluginsKeysAreRead() throws {
        let proxy = try self.settings(
            "database {\n plugin \"proxy\"\n host \"h\"\n port \"6600\"\n password \"p\"\n keepalive \"yes\"\n x \"1\"\n}"
        )
        #expect(proxy.unread.map(\.name) == ["x"])
        let upnp = try self.settings("database {\n plugin \"upnp\"\n interface \"eth0\"\n host \"h\"\n}")
        #expect(upnp.unread.map(\.name) == ["host"])
    }
}
