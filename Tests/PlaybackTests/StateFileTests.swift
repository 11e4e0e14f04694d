// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Testing

@Suite struct StateFileTests {
    /// What mpd 0.23.12 wrote in a probe (see the protocol notes, §7.1), with its `single: 2` bug.
    static let written = """
        sw_volume: 42
        audio_device_state:1:NullOut
        audio_device_state:0:Second
        state: pause
        current: 2
        time: 12.500000
        random: 1
        repeat: 1
        single: 2
        consume: 1
        crossfade: 3
        mixrampdb: -17.500000
        mixrampdelay: 0.000000
        playlist_begin
        0:top.mp3
        1:A/01 [x].mp3
        Prio: 7
        2:top.mp3
        playlist_end

        """

    @Test func readsWhatMPDWrites() {
        let (state, warnings) = StateFile.parse(Self.written)
        #expect(warnings.isEmpty)
        #expect(state.softwareVolume == 42)
        #expect(state.outputs == [.init(name: "NullOut", enabled: true), .init(name: "Second", enabled: false)])
        #expect(state.hasPlayerState)
        #expect(state.state == .pause)
        #expect(state.current == 2)
        #expect(state.elapsedSeconds == 12.5)
        #expect(state.random && state.repeatMode && state.consume)
        #expect(state.single == .oneshot)
        #expect(state.crossfadeSeconds == 3)
        #expect(state.mixRampDB == -17.5)
        #expect(state.mixRampDelay == 0)
        #expect(state.queue.map(\.uri) == ["top.mp3", "A/01 [x].mp3", "top.mp3"])
        #expect(state.queue.map(\.priority) == [0, 0, 7])
    }

    @Test func writesOneshotByNameAndOtherwiseAsMPD() {
        var (state, _) = StateFile.parse(Self.written)
        let expected = Self.written.replacingOccurrences("single: 2", with: "single: oneshot")
        #expect(state.serialized() == expected)
        state.single = .on
        #expect(state.serialized().contains("\nsingle: 1\n"))
    }

    @Test func roundTripsFullEntriesWithRangesAndTags() {
        var state = StateFile()
        state.state = .play
        state.current = 0
        state.elapsedSeconds = 1.0000004
        state.queue = [
            .init(
                uri: "a.mp3", priority: 255, rangeStartMilliseconds: 1500, rangeEndMilliseconds: 9000,
                tags: [TagItem(.artist, "A: B"), TagItem(.title, "T")], durationSeconds: 10,
                modificationTime: 1_700_000_000),
            .init(uri: "b.mp3", rangeStartMilliseconds: 250),
            .init(uri: "http://example.com/x#frag"),
        ]
        let text = state.serialized()
        #expect(text.contains("time: 1.000000\n"))
        #expect(
            text.contains(
                "Prio: 255\nsong_begin: a.mp3\nRange: 1500-9000\nTime: 10.000000\nArtist: A: B\nTitle: T\n"
                    + "mtime: 1700000000\nsong_end\nsong_begin: b.mp3\nRange: 250-\nsong_end\n2:http://example.com/x#frag\n"
            ))
        let (back, warnings) = StateFile.parse(text)
        #expect(warnings.isEmpty)
        #expect(back.queue == state.queue)
        #expect(back.state == .play)
    }

    @Test func stoppedStateWritesNoTimeButKeepsCurrent() {
        var state = StateFile()
        state.current = 4
        let text = state.serialized()
        #expect(text.hasPrefix("state: stop\ncurrent: 4\nrandom: 0\n"))
        #expect(!text.contains("time:"))
        #expect(text.contains("mixrampdelay: -1.000000\n"))
    }

    @Test func mountBlocksAreReadAndWrittenAsMPDWritesThem() {
        // As mpd 0.23.12 wrote it in a probe, after the outputs.
        let text = """
            sw_volume: 100
            audio_device_state:1:Null
            mount_begin
            uri: m
            mounted_url: smb://127.0.0.1:46997/share
            mount_end
            mount_begin
            mounted_url: nfs://h/x
            odd
            mount_end
            state: stop
            random: 0
            repeat: 0
            single: 0
            consume: 0
            crossfade: 0
            mixrampdb: 0.000000
            mixrampdelay: -1.000000
            playlist_begin
            0:m/long.mp3
            playlist_end

            """
        let (state, warnings) = StateFile.parse(text)
        #expect(
            state.mounts == [
                StateFile.MountState(path: "m", uri: "smb://127.0.0.1:46997/share"),
                StateFile.MountState(path: "", uri: "nfs://h/x"),
            ])
        #expect(warnings == ["Unrecognized line in mountpoint state: odd"])
        // A block missing a value is not written back.
        let written = state.serialized()
        #expect(
            written.contains(
                "audio_device_state:1:Null\nmount_begin\nuri: m\nmounted_url: smb://127.0.0.1:46997/share\nmount_end\nstate: stop\n"
            ))
        #expect(!written.contains("nfs://"))
    }

    @Test func unknownLinesBeforeThePlayerSectionAreReported() {
        let (state, warnings) = StateFile.parse("bogus: 1\nsw_volume: x\nstate: play\nwhatever\nrandom: 1\n")
        #expect(warnings == ["Unrecognized line in state file: bogus: 1", "Can't parse software volume: sw_volume: x"])
        #expect(state.random)
        #expect(state.state == .play)
    }

    @Test func malformedQueueLineEndsTheQueue() {
        let (state, warnings) = StateFile.parse(
            "state: stop\nplaylist_begin\n0:a.mp3\nnot a line\n1:b.mp3\nplaylist_end\n")
        #expect(state.queue.map(\.uri) == ["a.mp3"])
        #expect(warnings == ["Malformed playlist line in state file: not a line"])
    }

    @Test func nanMixRampDelayFromOldVersionsIsSkipped() {
        let (state, _) = StateFile.parse("state: stop\nmixrampdelay: nan\n")
        #expect(state.mixRampDelay == -1)
    }

    @Test func queueIsCappedAtTheMaximumLength() {
        let entries = (0..<10).map { "\($0):s\($0).mp3" }.joined(separator: "\n")
        let (state, _) = StateFile.parse(
            "state: stop\nplaylist_begin\n\(entries)\nplaylist_end\n", maximumQueueLength: 4)
        #expect(state.queue.count == 4)
    }

    @Test(arguments: [(0.0, "0.000000"), (-17.5, "-17.500000"), (2.0000005, "2.000001"), (123.456, "123.456000")])
    func formatsLikePrintfF(value: Double, text: String) {
        var state = StateFile()
        state.mixRampDB = value
        #expect(state.serialized().contains("mixrampdb: \(text)\n"))
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, with replacement: String) -> String {
        self.split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
