// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import TestSupport
import Testing

/// A playlist on a scripted player, recording the changes it announces.
final class PlaylistFixture {
    let player = ScriptedPlayer()
    let playlist: Playlist
    var changes: [Playlist.Changes] = []

    init(songs: Int, seed: UInt64 = 7) throws {
        self.playlist = Playlist(
            queue: Queue(maximumLength: 100, generator: QueueRandom(seed: seed)), player: self.player,
            resolvePath: PlaylistFixture.resolve)
        for index in 0..<songs {
            try self.playlist.append(QueueSong(uri: "s\(index)", info: SongInfo(durationMilliseconds: 1000)))
        }
        self.playlist.onChange = { [unowned self] in self.changes.append($0) }
    }

    /// As the server's: a URL stays, a song of the storage mounted at `m` is opened from the share, any other
    /// from the music directory.
    static func resolve(_ uri: String) -> String {
        if uri.contains("://") { return uri }
        if uri.hasPrefix("m/") { return "smb://share.example/music/" + uri.dropFirst(2) }
        return "/music/" + uri
    }

    var uris: [String] { self.playlist.queue.items.map(\.song.uri) }
    var currentURI: String? { self.playlist.currentPosition.map { self.uris[$0] } }
    var playingURI: String? { self.player.currentSong?.uri }
    var queuedURI: String? { self.player.queuedSong?.uri }
    var state: PlayerState { self.player.snapshot.state }
}

@Suite struct PlaylistTests {
    @Test func appendBumpsTheVersionOncePerSongAndBulkOnce() throws {
        let f = try PlaylistFixture(songs: 2)
        #expect(f.playlist.queue.version == 3)
        f.playlist.beginBulk()
        for index in 0..<3 { try f.playlist.append(QueueSong(uri: "b\(index)")) }
        f.playlist.commitBulk()
        #expect(f.playlist.queue.version == 4)
        #expect(f.changes == [.playlist])
        #expect(f.playlist.queue.items.suffix(3).allSatisfy { $0.version == 3 })
    }

    @Test func fullQueue() throws {
        let player = ScriptedPlayer()
        let playlist = Playlist(queue: Queue(maximumLength: 1), player: player, resolvePath: { $0 })
        try playlist.append(QueueSong(uri: "a"))
        #expect(throws: PlaylistError.tooLarge) { try playlist.append(QueueSong(uri: "b")) }
    }

    @Test func playQueuesTheNextSongOnceStartedAndMovesOnAtTheBorder() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: -1)
        #expect(f.playingURI == "s0")
        #expect(f.player.calls.first == .play(uri: "s0", seconds: 0))
        #expect(f.player.currentSong?.path == "/music/s0")
        #expect(f.queuedURI == nil)
        f.player.start()
        #expect(f.queuedURI == "s1")
        f.player.endOfSong()
        #expect(f.currentURI == "s1")
        #expect(f.queuedURI == "s2")
        f.player.endOfSong()
        #expect(f.currentURI == "s2")
        #expect(f.queuedURI == nil)
        f.player.endOfSong()
        // End of the queue: stopped, and the current song is forgotten.
        #expect(f.state == .stop)
        #expect(f.playlist.currentPosition == nil)
        #expect(!f.playlist.playing)
        // A bare play starts at the first song again.
        try f.playlist.play(position: -1)
        #expect(f.playingURI == "s0")
    }

    /// A queue of `songs` local songs then `streams`, playing the one at `position`, its changes forgotten.
    private func playingStreams(songs: Int, _ streams: [String], at position: Int) throws -> PlaylistFixture {
        let f = try PlaylistFixture(songs: songs)
        for url in streams { try f.playlist.append(QueueSong(uri: url)) }
        try f.playlist.play(position: position)
        f.player.start()
        f.changes = []
        return f
    }

    @Test func aStreamsNewTagsReplaceItsQueueEntrysOnly() throws {
        let f = try self.playingStreams(songs: 1, ["http://radio.example/live"], at: 1)
        let token = try #require(f.player.currentSong?.token)
        let version = f.playlist.queue.version
        let tags = [TagItem(.name, "Station"), TagItem(.title, "Song A")]
        f.playlist.handle(.tagChanged(token: token, tags: tags))
        #expect(f.playlist.queue.items[1].song.info.tags == tags)
        #expect(f.playlist.queue.version == version + 1)
        #expect(f.playlist.queue.isNewer(at: 1, than: version - 1))
        #expect(f.changes == [.player, .playlist])
        // A stale token, and a local file, keep their tags.
        f.playlist.handle(.tagChanged(token: token + 100, tags: []))
        try f.playlist.play(position: 0)
        f.player.start()
        f.playlist.handle(.tagChanged(token: try #require(f.player.currentSong?.token), tags: tags))
        #expect(f.playlist.queue.items[0].song.info.tags.isEmpty)
        #expect(f.playlist.queue.items[1].song.info.tags == tags)
    }

    /// A song of a mounted storage is remote too (mpd's `IsRemote` sees the share's URI): the decoder's tags
    /// replace its library tags, its duration stays, and the queue's version goes up.
    @Test func aMountedSongTakesItsDecodersTags() throws {
        let f = try PlaylistFixture(songs: 0)
        try f.playlist.append(
            QueueSong(uri: "m/a.flac", info: SongInfo(tags: [TagItem(.title, "Old")], durationMilliseconds: 5000)))
        try f.playlist.play(position: 0)
        f.player.start()
        #expect(f.player.currentSong?.path == "smb://share.example/music/a.flac")
        let version = f.playlist.queue.version
        let tags = [TagItem(.title, "From the decoder")]
        f.playlist.handle(.tagChanged(token: try #require(f.player.currentSong?.token), tags: tags))
        #expect(f.playlist.queue.items[0].song.info.tags == tags)
        #expect(f.playlist.queue.items[0].song.info.durationMilliseconds == 5000)
        #expect(f.playlist.queue.version == version + 1)
    }

    /// mpd applies a chunk's tag to the song playing it: tags of the queued stream, decoded ahead, wait until
    /// it plays (the outputs announce them then), and the current song keeps its own.
    @Test func tagsOfTheQueuedStreamLeaveTheQueueAlone() throws {
        let f = try self.playingStreams(songs: 0, ["http://radio.example/one", "http://radio.example/two"], at: 0)
        let queued = try #require(f.player.queuedSong?.token)
        let version = f.playlist.queue.version
        f.playlist.handle(.tagChanged(token: queued, tags: [TagItem(.title, "Early")]))
        #expect(f.playlist.queue.items.allSatisfy { $0.song.info.tags.isEmpty })
        #expect(f.playlist.queue.version == version)
        #expect(f.changes.isEmpty)
    }

    @Test func theNextSongIsQueuedWhenTheDecoderStartsBeforeAnyAudioIsHeard() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 1)
        #expect(f.queuedURI == nil)
        f.player.decoderStarts()
        #expect(f.queuedURI == "s2")
        // The song's start then changes nothing more.
        f.player.clearCalls()
        f.player.start()
        #expect(f.player.calls.isEmpty)
        #expect(f.queuedURI == "s2")
        f.player.endOfSong()
        #expect(f.currentURI == "s2")
        // A stale token (a song replaced before its decoder started) queues nothing.
        try f.playlist.play(position: 1)
        let stale = f.player.currentSong!.token
        try f.playlist.play(position: 0)
        f.player.onEvent(.decoderStarting(token: stale))
        #expect(f.queuedURI == nil)
        f.player.decoderStarts()
        #expect(f.queuedURI == "s1")
    }

    /// The song after the current one goes to the input cache when the decoder starts and when the song starts
    /// (`mpd`'s `PrefetchQueue`), resolved to its path; a player without a cache is not asked.
    @Test(arguments: [false, true]) func theNextSongIsPrefetchedOnlyIntoACache(cache: Bool) throws {
        let f = try PlaylistFixture(songs: 3)
        f.player.prefetches = cache
        try f.playlist.play(position: 0)
        f.player.clearCalls()
        f.player.decoderStarts()
        f.player.start()
        let prefetched = f.player.calls.compactMap { call -> String? in
            if case .prefetch(let path) = call { return path }
            return nil
        }
        #expect(prefetched == (cache ? ["/music/s1", "/music/s1"] : []))
    }

    @Test func eachHandOverHasItsOwnToken() throws {
        let f = try PlaylistFixture(songs: 1)
        f.playlist.setRepeat(true)
        f.playlist.setSingle(.on)
        try f.playlist.play(position: 0)
        f.player.start()
        // Single + repeat: the same song is queued again, with a new token.
        #expect(f.queuedURI == "s0")
        #expect(f.player.queuedSong?.token != f.player.currentSong?.token)
        f.player.endOfSong()
        #expect(f.currentURI == "s0")
        #expect(f.queuedURI == "s0")
        #expect(f.state == .play)
    }

    @Test func singleModePausesAtTheStartOfTheNextSong() throws {
        let f = try PlaylistFixture(songs: 2)
        f.playlist.setSingle(.on)
        #expect(f.player.borderPause)
        try f.playlist.play(position: 0)
        f.player.start()
        f.player.endOfSong()
        #expect(f.state == .pause)
        #expect(f.currentURI == "s1")
        #expect(f.playlist.queue.single == .on)
        // At the last song there is nothing to pause at: playback stops and the current song is forgotten.
        f.playlist.setPaused(false)
        f.player.endOfSong()
        #expect(f.state == .stop)
        #expect(f.playlist.currentPosition == nil)
    }

    @Test func singleOneshotTurnsItselfOff() throws {
        let f = try PlaylistFixture(songs: 2)
        f.playlist.setSingle(.oneshot)
        try f.playlist.play(position: 0)
        f.player.start()
        f.changes = []
        f.player.endOfSong()
        #expect(f.state == .pause)
        #expect(f.playlist.queue.single == .off)
        #expect(!f.player.borderPause)
        #expect(f.changes.contains(.options))
    }

    @Test func repeatRestartsAtTheFirstSong() throws {
        let f = try PlaylistFixture(songs: 2)
        f.playlist.setRepeat(true)
        try f.playlist.play(position: 1)
        f.player.start()
        #expect(f.queuedURI == "s0")
        #expect(f.playlist.nextPosition == 0)
    }

    @Test func consumeRemovesTheSongThatEnded() throws {
        let f = try PlaylistFixture(songs: 3)
        f.playlist.setConsume(true)
        try f.playlist.play(position: 0)
        f.player.start()
        let version = f.playlist.queue.version
        f.player.endOfSong()
        #expect(f.uris == ["s1", "s2"])
        #expect(f.currentURI == "s1")
        #expect(f.playlist.queue.version == version + 1)
        // next in consume mode removes the song it leaves.
        try f.playlist.playNext(ignoringSingle: true)
        #expect(f.uris == ["s2"])
        #expect(f.currentURI == "s2")
    }

    @Test func deletingTheCurrentSong() throws {
        // Playing: the next song plays.
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 1)
        try f.playlist.delete(position: 1)
        #expect(f.playingURI == "s2")
        #expect(f.currentURI == "s2")
        #expect(f.state == .play)
        // Paused: stop, no current song.
        f.playlist.setPaused(true)
        try f.playlist.delete(id: 3)
        #expect(f.state == .stop)
        #expect(f.playlist.currentPosition == nil)
        // Stopped: the current song is forgotten.
        try f.playlist.play(position: 0)
        f.playlist.stop()
        #expect(f.currentURI == "s0")
        try f.playlist.delete(position: 0)
        #expect(f.playlist.currentPosition == nil)
    }

    @Test func deletingARangeAroundTheCurrentSongKeepsIndicesRight() throws {
        let f = try PlaylistFixture(songs: 6)
        try f.playlist.play(position: 4)
        f.player.start()
        #expect(f.queuedURI == "s5")
        try f.playlist.delete(start: 0, end: 2)
        #expect(f.currentURI == "s4")
        #expect(f.playlist.currentPosition == 2)
        #expect(f.queuedURI == "s5")
        #expect(throws: PlaylistError.badSongIndex) { try f.playlist.delete(start: 5, end: 6) }
        // START == length is an empty range: nothing happens, no version bump.
        let version = f.playlist.queue.version
        try f.playlist.delete(start: 4, end: 9)
        #expect(f.playlist.queue.version == version)
    }

    @Test func nextAndPrevious() throws {
        let f = try PlaylistFixture(songs: 3)
        #expect(throws: PlaylistError.notPlaying) { try f.playlist.playNext() }
        #expect(throws: PlaylistError.notPlaying) { try f.playlist.playPrevious() }
        f.playlist.setSingle(.on)
        try f.playlist.play(position: 0)
        try f.playlist.playNext(ignoringSingle: true)
        #expect(f.currentURI == "s1")
        #expect(f.playlist.queue.single == .on)
        try f.playlist.playPrevious()
        #expect(f.currentURI == "s0")
        try f.playlist.playPrevious()
        #expect(f.currentURI == "s0")
        f.playlist.setRepeat(true)
        try f.playlist.playPrevious()
        #expect(f.currentURI == "s2")
        f.playlist.setRepeat(false)
        try f.playlist.playNext(ignoringSingle: true)
        #expect(f.state == .stop)
        #expect(f.playlist.currentPosition == nil)
    }

    @Test func stopKeepsTheCurrentSongAndPauseTogglesOnlyWhilePlaying() throws {
        let f = try PlaylistFixture(songs: 2)
        f.playlist.togglePause()
        #expect(f.player.calls.isEmpty)
        try f.playlist.play(position: 1)
        f.playlist.togglePause()
        #expect(f.state == .pause)
        try f.playlist.play(position: -1)
        #expect(f.state == .play)
        f.playlist.stop()
        #expect(f.state == .stop)
        #expect(f.currentURI == "s1")
        #expect(f.playlist.nextPosition == nil)
        try f.playlist.play(position: -1)
        #expect(f.playingURI == "s1")
    }

    @Test func seekOnAnotherSongStartsItAndSeekcurIsRelative() throws {
        let f = try PlaylistFixture(songs: 3)
        #expect(throws: PlaylistError.notPlaying) { try f.playlist.seekCurrent(seconds: 1, relative: false) }
        try f.playlist.seek(position: 2, seconds: 0.5)
        #expect(f.player.calls.last == .play(uri: "s2", seconds: 0.5))
        #expect(f.currentURI == "s2")
        f.player.elapsedSeconds = 0.75
        try f.playlist.seekCurrent(seconds: -0.25, relative: true)
        #expect(f.player.calls.last == .seek(seconds: 0.5))
        try f.playlist.seekCurrent(seconds: -5, relative: true)
        #expect(f.player.calls.last == .seek(seconds: 0))
        f.player.seekable = false
        #expect(throws: PlaylistError(.player, "Not seekable")) { try f.playlist.seek(id: 3, seconds: 0.1) }
        #expect(f.playlist.error == "Not seekable")
        #expect(throws: PlaylistError.badSongIndex) { try f.playlist.seek(position: 3, seconds: 0) }
        // Seeking into another song while paused stays paused.
        f.player.seekable = true
        try f.playlist.play(position: 0)
        f.playlist.setPaused(true)
        try f.playlist.seek(position: 1, seconds: 0.1)
        #expect(f.currentURI == "s1")
        #expect(f.state == .pause)
        #expect(throws: PlaylistError.noSuchSong) { try f.playlist.seek(id: 9, seconds: 0) }
    }

    @Test func prioritiesResetWhenASongStarts() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.setPriority(start: 1, end: 2, 5)
        #expect(f.playlist.queue.items[1].priority == 5)
        try f.playlist.play(position: 0)
        f.player.start()
        let version = f.playlist.queue.version
        f.player.endOfSong()
        #expect(f.playlist.queue.items[1].priority == 0)
        #expect(f.playlist.queue.version == version + 1)
    }

    @Test func randomPlaysHigherPrioritiesFirst() throws {
        let f = try PlaylistFixture(songs: 6)
        try f.playlist.setPriority(id: 4, 50)
        try f.playlist.setPriority(id: 6, 60)
        f.playlist.setRandom(true)
        try f.playlist.play(position: -1)
        #expect(f.playingURI == "s5")
        f.player.start()
        #expect(f.queuedURI == "s3")
    }

    @Test func randomOnWhileStoppedForgetsTheCurrentSong() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 1)
        f.playlist.stop()
        f.playlist.setRandom(true)
        #expect(f.playlist.currentPosition == nil)
        try f.playlist.play(position: 2)
        f.playlist.setRandom(false)
        #expect(f.currentURI == "s2")
        #expect(f.playlist.queue.order == [0, 1, 2])
    }

    @Test func decodeErrorsMoveOnUntilEverySongFailed() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 0)
        f.player.fail("Failed to decode s0")
        #expect(f.playingURI == "s1")
        // Playing the next song clears the error, as mpd's player does.
        #expect(f.playlist.error == nil)
        f.player.fail("Failed to decode s1")
        f.player.fail("Failed to decode s2")
        #expect(f.state == .stop)
        #expect(!f.playlist.playing)
        #expect(f.playlist.error == "Failed to decode s2")
        f.playlist.clearError()
        #expect(f.playlist.error == nil)
    }

    @Test func aSongStartedBySeekStopsOnError() throws {
        // With repeat, a failing song started by play moves on to the first song; one started by seek stops.
        let f = try PlaylistFixture(songs: 3)
        f.playlist.setRepeat(true)
        try f.playlist.play(position: 2)
        f.player.queue(nil)
        f.player.fail("Failed to decode s2")
        #expect(f.playingURI == "s0")
        try f.playlist.seek(position: 2, seconds: 0.2)
        f.player.queue(nil)
        f.player.fail("Failed to decode s2")
        #expect(f.state == .stop)
        #expect(!f.playlist.playing)
        #expect(f.currentURI == "s2")
        #expect(f.playlist.error == "Failed to decode s2")
    }

    @Test func outputFailurePausesOnTheSong() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 0)
        f.player.failOutputs("Failed to open audio output")
        #expect(f.playlist.playing)
        #expect(f.state == .pause)
        #expect(f.currentURI == "s0")
        #expect(f.playlist.error == "Failed to open audio output")
    }

    @Test func replayGainAutoFollowsRandom() throws {
        let f = try PlaylistFixture(songs: 1)
        f.playlist.replayGainMode = .auto
        #expect(f.player.replayGainMode == .album)
        f.playlist.setRandom(true)
        #expect(f.player.replayGainMode == .track)
    }

    @Test func moveAndSwapFollowTheCurrentSong() throws {
        let f = try PlaylistFixture(songs: 5)
        try f.playlist.play(position: 1)
        try f.playlist.move(start: 1, end: 2, to: 4)
        #expect(f.currentURI == "s1")
        #expect(f.playlist.currentPosition == 4)
        try f.playlist.swap(4, 0)
        #expect(f.playlist.currentPosition == 0)
        #expect(f.currentURI == "s1")
        #expect(throws: PlaylistError.badSongIndex) { try f.playlist.move(start: 0, end: 2, to: 4) }
    }

    @Test func shuffleKeepsThePlayingSongFirst() throws {
        let f = try PlaylistFixture(songs: 6)
        try f.playlist.play(position: 3)
        try f.playlist.shuffle(start: 0, end: 6)
        #expect(f.uris[0] == "s3")
        #expect(f.playlist.currentPosition == 0)
        #expect(Set(f.uris) == Set((0..<6).map { "s\($0)" }))
        f.playlist.stop()
        try f.playlist.shuffle(start: 0, end: 6)
        #expect(f.playlist.currentPosition == nil)
    }

    @Test func rangeOfTheQueuedSongIsRequeued() throws {
        let f = try PlaylistFixture(songs: 3)
        try f.playlist.play(position: 0)
        f.player.start()
        #expect(throws: PlaylistError(.denied, "Cannot edit the current song")) {
            try f.playlist.setRange(id: 1, startMilliseconds: 0, endMilliseconds: 500)
        }
        try f.playlist.setRange(id: 2, startMilliseconds: 250, endMilliseconds: 0)
        #expect(f.player.queuedSong?.rangeStartMilliseconds == 250)
        #expect(throws: PlaylistError(.badRange, "Invalid start offset")) {
            try f.playlist.setRange(id: 3, startMilliseconds: 1001, endMilliseconds: 0)
        }
        // An end at or past the duration means "to the end".
        try f.playlist.setRange(id: 3, startMilliseconds: 0, endMilliseconds: 1000)
        #expect(f.playlist.queue.items[2].song.endMilliseconds == 0)
    }

    @Test func databaseUpdateRemovesGoneSongsButNotThePlayingOne() throws {
        let f = try PlaylistFixture(songs: 4)
        try f.playlist.play(position: 1)
        let version = f.playlist.queue.version
        let store = SongList([QueueSong(uri: "s0"), QueueSong(uri: "s3")])
        f.playlist.databaseModified(store) { uri in uri == "s0" || uri == "s3" ? .song(QueueSong(uri: uri)) : nil }
        #expect(f.uris == ["s0", "s1", "s3"])
        #expect(f.currentURI == "s1")
        #expect(f.playlist.queue.version == version + 1)
    }

    /// Songs of a snapshot, stored by number, as the library's are.
    private static func snapshot(_ titles: [String], modified: [Int64] = [1, 1, 1, 1]) -> SongList {
        SongList(
            titles.enumerated().map { index, title in
                QueueSong(
                    uri: "d/\(index)", modificationTime: modified[index],
                    info: SongInfo(
                        tags: [TagItem(.title, title)], durationMilliseconds: 1000,
                        audioFormat: AudioFormat(sampleRate: 44100 + index, sampleFormat: .s16, channels: 2)))
            })
    }

    @Test func storedSongsReadFromTheirSnapshotAndAreEditedAsSongsOfTheirOwn() throws {
        let store = Self.snapshot(["A", "B"])
        let f = try PlaylistFixture(songs: 0)
        try f.playlist.append(.stored(store, 0))
        try f.playlist.append(.stored(store, 1))
        #expect(f.playlist.queue.items[1].song == store.songs[1])
        #expect(f.playlist.queue.items[1].uri == "d/1")
        #expect(f.playlist.queue.items[1].modificationTime == 1)
        #expect(f.playlist.queue.items[1].isInDatabase)
        try f.playlist.setRange(id: 2, startMilliseconds: 250, endMilliseconds: 0)
        #expect(f.playlist.queue.items[0].stored?.store === store)
        #expect(f.playlist.queue.items[1].stored == nil)
        // The song number in that store alone, by reference or by identity; none for the song of its own.
        let other = Self.snapshot(["A", "B"])
        let items = f.playlist.queue.items
        #expect(items[0].song(in: store) == 0 && items[0].song(inStore: ObjectIdentifier(store)) == 0)
        #expect(items[0].song(in: other) == nil && items[0].song(inStore: ObjectIdentifier(other)) == nil)
        #expect(items[1].song(in: store) == nil && items[1].song(inStore: ObjectIdentifier(store)) == nil)
        // All of them at once, in queue order: -1 for an item of no song of the store.
        #expect(f.playlist.queue.songNumbers(at: 0..<2, inStore: ObjectIdentifier(store)) == [0, -1])
        #expect(f.playlist.queue.songNumbers(at: [1, 0], inStore: ObjectIdentifier(store)) == [-1, 0])
        #expect(f.playlist.queue.songNumbers(at: 0..<2, inStore: ObjectIdentifier(other)) == [-1, -1])
        #expect(f.playlist.queue.items[1].song.startMilliseconds == 250)
        #expect(f.playlist.queue.items[1].song.info == store.songs[1].info)
    }

    @Test func aNewSnapshotHoldsUnchangedSongsAndNoItemKeepsTheOldOne() throws {
        var old: SongList? = Self.snapshot(["A", "B", "C", "D"])
        weak let released = old
        let f = try PlaylistFixture(songs: 0)
        for index in 0..<4 { try f.playlist.append(.stored(old!, Int32(index))) }
        try f.playlist.play(position: 3)
        let version = f.playlist.queue.version
        let before = f.playlist.queue.items.map(\.song)
        // d/0 unchanged; d/1 retagged with the same time (kept as it was, as mpd keeps it); d/2 changed on disk;
        // d/3, playing, is gone.
        var songs = Self.snapshot(["A", "B2", "C2"], modified: [1, 1, 2]).songs
        songs[2].info.audioFormat = AudioFormat(sampleRate: 96000, sampleFormat: .s24, channels: 2)
        let new = SongList(songs)
        f.playlist.databaseModified(new, lookup: new.lookup)
        old = nil
        #expect(released == nil)
        let items = f.playlist.queue.items
        #expect(items.count == 4)
        #expect(items[0].stored?.store === new)
        #expect(items[0].version < version)
        #expect(items[1].stored == nil)
        #expect(items[1].song == before[1])
        #expect(items[1].version < version)
        #expect(items[2].song.info.tags == [TagItem(.title, "C2")])
        #expect(items[2].song.modificationTime == 2)
        // The audio format the queue had stays (`mpd` keeps it too): the song is one of its own.
        #expect(items[2].song.info.audioFormat == before[2].info.audioFormat)
        #expect(items[2].stored == nil)
        #expect(items[2].version == version)
        #expect(items[3].stored == nil)
        #expect(items[3].song == before[3])
        #expect(f.playlist.queue.version == version + 1)
    }

    @Test func aChangedSongThatReadsAsTheSnapshotsIsHeldThere() throws {
        let old = SongList([QueueSong(uri: "d/0", modificationTime: 1, info: SongInfo(tags: [TagItem(.title, "A")]))])
        let new = SongList([QueueSong(uri: "d/0", modificationTime: 2, info: SongInfo(tags: [TagItem(.title, "B")]))])
        let f = try PlaylistFixture(songs: 0)
        try f.playlist.append(.stored(old, 0))
        f.playlist.databaseModified(new, lookup: new.lookup)
        #expect(f.playlist.queue.items[0].stored?.store === new)
        #expect(f.playlist.queue.items[0].song == new.songs[0])
    }

    @Test func keptSongsGoneFromTheSnapshotStayAsSongsOfTheirOwn() throws {
        // d/1 and d/2 are an unmounted storage's songs, which the update does not remove (`isKept`); d/3 is gone.
        var old: SongList? = Self.snapshot(["A", "B", "C", "D"])
        weak let released = old
        let f = try PlaylistFixture(songs: 0)
        for index in 0..<4 { try f.playlist.append(.stored(old!, Int32(index))) }
        let version = f.playlist.queue.version
        let before = f.playlist.queue.items.map(\.song)
        let new = SongList([before[0]])
        f.playlist.databaseModified(new, lookup: new.lookup, isKept: { $0 == "d/1" || $0 == "d/2" })
        old = nil
        #expect(released == nil)
        let items = f.playlist.queue.items
        #expect(items.map(\.uri) == ["d/0", "d/1", "d/2"])
        #expect(items[0].stored?.store === new)
        #expect(items[1].stored == nil && items[2].stored == nil)
        #expect(items[1].song == before[1] && items[2].song == before[2])
        #expect(items[1].version < version && items[2].version < version)
        #expect(f.playlist.queue.version == version + 1)
    }

    @Test func aReplacedSnapshotChangesNothingQueuedAndNoItemKeepsTheOldOne() throws {
        // A mount or an unmount: d/0 reads the same in the new snapshot, d/1 is not there (its storage was
        // unmounted), d/2 reads otherwise there (a storage mounted again with other songs); none changes.
        var old: SongList? = Self.snapshot(["A", "B", "C"])
        weak let released = old
        let f = try PlaylistFixture(songs: 0)
        for index in 0..<3 { try f.playlist.append(.stored(old!, Int32(index))) }
        try f.playlist.append(QueueSong(uri: "http://example.com/stream"))
        let version = f.playlist.queue.version
        let before = f.playlist.queue.items.map(\.song)
        f.changes = []
        let new = SongList([before[0], Self.snapshot(["A", "B", "C2"]).songs[2]])
        f.playlist.snapshotReplaced(new, lookup: new.lookup)
        old = nil
        #expect(released == nil)
        let items = f.playlist.queue.items
        #expect(items.map(\.song) == before)
        #expect(items[0].stored?.store === new)
        #expect(items[1].stored == nil && items[2].stored == nil && items[3].stored == nil)
        #expect(items.allSatisfy { $0.version < version })
        #expect(f.playlist.queue.version == version)
        #expect(f.changes.isEmpty)
    }
}

/// A `SongStore` over song values.
final class SongList: SongStore {
    let songs: [QueueSong]

    init(_ songs: [QueueSong]) { self.songs = songs }

    func uri(_ song: Int32) -> String { self.songs[Int(song)].uri }
    func modificationTime(_ song: Int32) -> Int64 { self.songs[Int(song)].modificationTime ?? 0 }
    func info(_ song: Int32) -> SongInfo { self.songs[Int(song)].info }

    func isSame(_ song: Int32, as other: any SongStore, _ otherSong: Int32) -> Bool {
        guard let other = other as? SongList else { return false }
        return self.songs[Int(song)] == other.songs[Int(otherSong)]
    }

    /// The song at `uri`, stored.
    func lookup(_ uri: String) -> QueueEntry? {
        self.songs.firstIndex { $0.uri == uri }.map { .stored(self, Int32($0)) }
    }
}
