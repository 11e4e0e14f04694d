// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Playback
import Server
import TestSupport
import Testing

/// The state file service on a server with a scripted player: restore at start-up, debounced writes, shutdown.
@Suite(.serialized) struct StateFileServiceTests {
    /// A fixture whose database file exists, so a second server on the same library restores songs at once.
    static func library() throws -> MusicDirectory {
        let first = try QueueFixture()
        return first.music
    }

    static func server(
        _ music: MusicDirectory, state: String, restorePaused: Bool = false, interval: Double = 120,
        clock: ManualClock = ManualClock()
    ) throws -> QueueFixture {
        try QueueFixture(music: music) { options in
            options.stateFile = StateFileOptions(
                path: state, intervalSeconds: interval, restorePaused: restorePaused, clock: clock)
        }
    }

    /// Lets `seconds` pass on `clock`, then waits until the loop ran the state file's timers that fell due (they
    /// are queued on the loop before the scripted player's turn).
    static func advance(_ clock: ManualClock, seconds: Double, _ f: QueueFixture) {
        f.server.withPlayer { _ in }
        clock.advance(seconds: seconds)
        f.server.withPlayer { _ in }
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Waits up to 10 s of real time for `predicate`.
    static func eventually(_ predicate: () -> Bool) -> Bool {
        for _ in 0..<1000 where !predicate() { Thread.sleep(forTimeInterval: 0.01) }
        return predicate()
    }

    @Test func setvolWithoutAMixerStillSetsTheSavedSoftwareVolume() throws {
        // mpd's mixer memento keeps the value before it looks for a mixer, and its state file saves it.
        let music = try Self.library()
        let state = music.path + ".state"
        let clock = ManualClock()
        let f = try Self.server(music, state: state, clock: clock)
        f.server.withPlayer { $0.volume = nil }
        #expect(f.request("setvol 42") == ["ACK [5@0] {setvol} No mixer"])
        #expect(f.request("repeat 1") == ["OK"])
        Self.advance(clock, seconds: 1, f)
        #expect(Self.eventually { Self.read(state)?.contains("repeat: 1") == true })
        #expect(Self.read(state)?.hasPrefix("sw_volume: 42\n") == true)
    }

    @Test func aChangeIsOnDiskWithinOneSecond() throws {
        let music = try Self.library()
        let state = music.path + ".state"
        let clock = ManualClock()
        let f = try Self.server(music, state: state, clock: clock)
        #expect(f.request("add a") == ["OK"])
        #expect(f.request("prio 9 1") == ["OK"])
        #expect(f.request("single oneshot") == ["OK"])
        #expect(f.request("setvol 42") == ["OK"])
        #expect(f.request("disableoutput 0") == ["OK"])
        // The write waits for more changes half a second, leaving the other half of the second for itself.
        Self.advance(clock, seconds: 0.49, f)
        #expect(Self.read(state) == nil)
        Self.advance(clock, seconds: 0.01, f)
        #expect(Self.eventually { Self.read(state)?.contains("playlist_end") == true })
        #expect(
            Self.read(state) == """
                sw_volume: 42
                audio_device_state:0:Null Output
                state: stop
                random: 0
                repeat: 0
                single: oneshot
                consume: 0
                crossfade: 0
                mixrampdb: 0.000000
                mixrampdelay: -1.000000
                playlist_begin
                0:a/1.mp3
                Prio: 9
                1:a/2.mp3
                2:a/3.mp3
                playlist_end

                """)
        // Nothing changed: nothing is written again.
        try FileManager.default.removeItem(atPath: state)
        #expect(f.request("single oneshot") == ["OK"])
        Self.advance(clock, seconds: 1, f)
        #expect(Self.read(state) == nil)
        // A range makes a full entry; the next change is written too.
        #expect(f.request("rangeid 3 0.25:0.5") == ["OK"])
        Self.advance(clock, seconds: 0.5, f)
        #expect(Self.eventually { Self.read(state) != nil })
        #expect(Self.read(state)?.contains("song_begin: a/3.mp3\nRange: 250-500\n") == true)
    }

    @Test func partitionsAreKeptBesideTheStateFileAndComeBack() throws {
        let music = try Self.library()
        let state = music.path + ".state"
        let clock = ManualClock()
        do {
            let f = try Self.server(music, state: state, clock: clock)
            for line in [
                "newpartition p1", "partition p1", "moveoutput \"Null Output\"", "add a/2.mp3", "repeat 1",
                "newpartition p2",
            ] {
                #expect(f.request(line) == ["OK"], "\(line)")
            }
            Self.advance(clock, seconds: 0.5, f)
            #expect(Self.eventually { Self.read(state + ".partitions")?.contains("partition: p2") == true })
        }
        #expect(Self.read(state)?.contains("audio_device_state:0:Null Output\n") == true)
        #expect(Self.read(state)?.contains("playlist_begin\nplaylist_end\n") == true)
        let text = try #require(Self.read(state + ".partitions"))
        #expect(text.hasPrefix("partition: p1\nsw_volume: 100\naudio_device_state:1:Null Output\nstate: stop\n"))
        #expect(text.contains("repeat: 1\n") && text.contains("playlist_begin\n0:a/2.mp3\nplaylist_end\n"))

        let f = try Self.server(music, state: state, clock: clock)
        #expect(f.request("listpartitions") == ["partition: default", "partition: p1", "partition: p2", "OK"])
        #expect(
            f.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: dummy", "outputenabled: 0", "OK",
            ])
        #expect(f.request("partition p1") == ["OK"])
        #expect(f.status("repeat") == "1")
        #expect(f.request("playlist") == ["0:file: a/2.mp3", "OK"])
        #expect(
            f.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: null", "outputenabled: 1", "OK",
            ])
    }

    @Test func restoresWhatMPDWrote() throws {
        let music = try Self.library()
        let state = music.path + ".state"
        try """
        sw_volume: 42
        audio_device_state:0:Null Output
        audio_device_state:1:Unknown Output
        state: pause
        current: 2
        time: 0.250000
        random: 0
        repeat: 1
        single: 2
        consume: 0
        crossfade: 3
        mixrampdb: -12.500000
        mixrampdelay: 2.000000
        playlist_begin
        0:a/1.mp3
        Prio: 7
        1:gone.mp3
        2:b/1.mp3
        song_begin: top.mp3
        Range: 100-400
        Time: 1.044000
        Title: top.mp3
        mtime: 1600000000
        song_end
        playlist_end

        """.write(toFile: state, atomically: true, encoding: .utf8)
        let f = try Self.server(music, state: state)
        #expect(f.files == ["a/1.mp3", "b/1.mp3", "top.mp3"])
        // The missing song is skipped, its priority with it; the position saved (2) names top.mp3 now, as in mpd.
        #expect(f.request("playlistinfo 2").contains("Range: 0.100-0.400"))
        #expect(!f.request("playlistinfo").contains { $0.hasPrefix("Prio:") })
        let status = f.request("status")
        for line in [
            "volume: 42", "repeat: 1", "single: oneshot", "playlist: 2", "playlistlength: 3", "xfade: 3",
            "mixrampdb: -12.5", "mixrampdelay: 2", "state: pause", "song: 2",
        ] {
            #expect(status.contains(line), "\(line)")
        }
        #expect(f.request("outputs").contains("outputenabled: 0"))
        let calls = ScriptedCalls()
        f.server.withPlayer { calls.set($0.calls) }
        // Seeking starts the saved song at the saved time and queues the next one (single with repeat: itself);
        // then the pause.
        #expect(calls.get() == [.play(uri: "top.mp3", seconds: 0.25), .queue(uri: "top.mp3"), .setPaused(true)])
    }

    @Test func restorePausedAndStoppedStates() throws {
        let music = try Self.library()
        let state = music.path + ".state"
        let playing =
            "state: play\ncurrent: 1\nrandom: 0\nrepeat: 0\nsingle: 0\nconsume: 1\nplaylist_begin\n0:a/1.mp3\n1:a/2.mp3\nplaylist_end\n"
        try playing.write(toFile: state, atomically: true, encoding: .utf8)
        do {
            let f = try Self.server(music, state: state, restorePaused: true)
            #expect(f.status("state") == "pause")
            #expect(f.status("song") == "1")
            #expect(f.status("consume") == "1")
        }
        try playing.write(toFile: state, atomically: true, encoding: .utf8)
        do {
            let f = try Self.server(music, state: state)
            #expect(f.status("state") == "play")
        }
        try playing.replacingOccurrences(of: "state: play", with: "state: stop").replacingOccurrences(
            of: "current: 1", with: "current: 7"
        ).write(toFile: state, atomically: true, encoding: .utf8)
        let f = try Self.server(music, state: state)
        // A position past the end means the first song.
        #expect(f.status("state") == "stop")
        #expect(f.status("song") == "0")
        let calls = ScriptedCalls()
        f.server.withPlayer { calls.set($0.calls) }
        #expect(calls.get().isEmpty)
    }

    @Test func shutdownWritesThePositionAndAFailedWriteKeepsTheFile() throws {
        let music = try Self.library()
        let state = music.path + ".state"
        do {
            let f = try Self.server(music, state: state)
            #expect(f.request("add b") == ["OK"])
            #expect(f.request("play 0") == ["OK"])
            f.server.withPlayer { $0.elapsedSeconds = 0.75 }
        }
        // The fixture's end stopped the server, which wrote the position.
        #expect(Self.read(state)?.contains("state: play\ncurrent: 0\ntime: 0.750000\n") == true)
        // The temporary file's name taken by a directory: the write fails, the file stays, the server goes on.
        let before = Self.read(state)
        let blocker =
            URL(fileURLWithPath: state).deletingLastPathComponent().path + "/."
            + URL(fileURLWithPath: state).lastPathComponent + ".tmp"
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        let clock = ManualClock()
        let f = try Self.server(music, state: state, clock: clock)
        #expect(f.status("state") == "play")
        #expect(f.request("repeat 1") == ["OK"])
        Self.advance(clock, seconds: 1, f)
        #expect(Self.read(state) == before)
        #expect(f.request("ping") == ["OK"])
        try FileManager.default.removeItem(atPath: blocker)
        #expect(f.request("random 1") == ["OK"])
        Self.advance(clock, seconds: 1, f)
        #expect(Self.eventually { Self.read(state)?.contains("random: 1\nrepeat: 1\n") == true })
    }
}

/// Hands the scripted player's calls from the loop thread to the test.
final class ScriptedCalls: @unchecked Sendable {
    // Written on the loop thread inside `withPlayer`, read after it returned (which waits for it).
    private var calls: [ScriptedPlayer.Call] = []
    func set(_ calls: [ScriptedPlayer.Call]) { self.calls = calls }
    func get() -> [ScriptedPlayer.Call] { self.calls }
}
