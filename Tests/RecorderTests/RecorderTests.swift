// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Recorder
import Testing

/// `format_path`'s tag templates, as `mpd`'s `FormatTag`, and the recorder block's keys (the files it writes:
/// conformance/test_recorder.py).
@Suite struct RecorderTests {
    private let tags = [TagItem(.artist, "Ann"), TagItem(.title, "Song/One"), TagItem(.album, "...Dots")]

    private func format(_ template: String, _ tags: [TagItem]? = nil) -> String? {
        TagTemplate.format(template, tags: tags ?? self.tags, now: 0)
    }

    @Test func variablesAreTagValuesMadeSafeForAPath() {
        #expect(self.format("/r/%artist% - %title%.ogg") == "/r/Ann - Song One.ogg")
        // Leading dots dropped; names any case; a tag the song lacks is empty.
        #expect(self.format("/r/%ALBUM%-%genre%.") == "/r/Dots-.")
        // After a value, `|` skips the alternative.
        #expect(self.format("/r/%ALBUM%|%genre%|x") == "/r/Dots")
        #expect(self.format("%iso8601%") == "1970-01-01T00:00:00Z")
    }

    @Test func unknownAndMalformedSpecifiersAreCopied() {
        #expect(self.format("/r/%nosuch%.x") == "/r/%nosuch%.x")
        #expect(self.format("/r/100%") == "/r/100%")
        #expect(self.format("/r/%a b%") == "/r/%a b%")
    }

    @Test func groupsAlternativesAndConjunctions() {
        #expect(self.format("/r/[%genre% - ]%title%") == "/r/Song One")
        #expect(self.format("/r/[%artist% - ]%title%") == "/r/Ann - Song One")
        #expect(self.format("[/r/%genre%|/r/%artist%]") == "/r/Ann")
        #expect(self.format("[/r/%genre%|%composer%]") == nil)
        #expect(self.format("[%artist%&%genre%]") == nil)
        #expect(self.format("[%artist%&%title%]") == "AnnSong One")
    }

    @Test func escapes() {
        #expect(self.format("#[x#]#%artist#%") == "[x]%artist%")
        #expect(self.format(#"a\tb\[c\qd"#) == "a\tb[c\\qd")
    }

    @Test func theBlockNeedsExactlyOnePath() throws {
        let plugin = RecorderOutputPlugin(home: "/home/u")
        func make(_ parameters: [String: String]) throws(OutputError) -> any AudioOutput {
            try plugin.makeOutput(
                OutputConfiguration(name: "Rec", type: "recorder", parameters: BlockParameters(parameters)))
        }
        #expect(throws: OutputError("'path' not configured")) { try make(["encoder": "wave"]) }
        #expect(throws: OutputError("Cannot have both 'path' and 'format_path'")) {
            try make(["encoder": "wave", "path": "/tmp/x", "format_path": "/tmp/%title%"])
        }
        #expect(throws: OutputError("not an absolute path: rel.wav")) {
            try make(["encoder": "wave", "path": "rel.wav"])
        }
        #expect(throws: OutputError("No such encoder: nope")) { try make(["encoder": "nope", "path": "/tmp/x"]) }
        #expect(try make(["encoder": "wave", "path": "~/x.wav"]).plugin == "recorder")
    }
}
