// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import TestSupport
import Testing

/// What the outputs' `sendTag` gets, as `mpd`'s outputs get a chunk's tag: a local file's tags from the library
/// when it starts, even none at all (an empty tag); nothing for a stream until the stream brings tags.
@Suite struct PlayerOutputTagTests {
    private func played(_ song: PlayableSong, configuration: OutputConfiguration = nullConfiguration()) throws
        -> [[TagItem]]
    {
        let output = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(configuration, output, nil)])
        harness.withPlayer { $0.play(song, atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: song.token)) })
        return output.tags
    }

    private func song(_ token: UInt64, tags: [TagItem]?) -> PlayableSong {
        var song = fakeSong(token, base: 0, frames: 3000)
        song.tags = tags
        return song
    }

    @Test func aTaggedFileGivesItsTags() throws {
        let tags = [TagItem(.artist, "The Band"), TagItem(.title, "A Song")]
        #expect(try self.played(self.song(1, tags: tags)) == [tags])
    }

    @Test func aFileWithoutTagsGivesAnEmptyTag() throws {
        #expect(try self.played(self.song(1, tags: [])) == [[]])
    }

    @Test func aStreamGivesNoTagOfItsOwn() throws {
        #expect(try self.played(self.song(1, tags: nil)).isEmpty)
    }

    @Test func anOutputWithTagsOffGetsNone() throws {
        let configuration = OutputConfiguration(name: "out", type: "null", tags: false)
        #expect(try self.played(self.song(1, tags: [TagItem(.title, "A")]), configuration: configuration).isEmpty)
        #expect(try self.played(self.song(2, tags: []), configuration: configuration).isEmpty)
    }
}
