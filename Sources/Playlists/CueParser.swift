// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A cue sheet parser with `mpd`'s rules (its own, not libcue's). Pure.
///
/// - Header: `TITLE` is `Album`, `PERFORMER` is `AlbumArtist`, `REM NAME value` any tag `mpd` knows by
///   that name; every track starts with a copy of these.
/// - `FILE "name" TYPE`: tracks that follow are ranges of `name` when TYPE is `WAVE`, `FLAC`, `MP3` or
///   `AIFF`; other files are skipped up to the next `FILE`.
/// - `TRACK nn AUDIO` starts a song with `Track` `nn` (as written); other track types are skipped. In a
///   track `TITLE` is `Title`, `PERFORMER` `Artist`.
/// - `INDEX nn mm:ss:ff` (75 frames a second): the first `INDEX` starts the song and ends the one before
///   when it lies after that one's start; after an `INDEX 00` (a pregap, given to the song before) the
///   next `INDEX` counts too.
/// - Commands are case-sensitive; values are a word or `"quoted"` (an unterminated quote takes the rest
///   of the line).
struct CueParser {
    private enum State { case header, wave, ignoreFile, track, ignoreTrack }

    private var state = State.header
    private var headerTag = TagBuilder()
    private var songTag = TagBuilder()
    private var filename = ""
    private var current: PlaylistEntry?
    private var previous: PlaylistEntry?
    private var ignoreIndex = false
    private var finished: [PlaylistEntry] = []

    /// Feeds one line.
    mutating func feed(_ line: ArraySlice<UInt8>) {
        var source = line
        guard let command = Self.nextToken(&source) else { return }
        switch true {
        case command.elementsEqual("REM".utf8):
            guard let type = Self.nextToken(&source),
                let tagType = TagType(parsing: String(decoding: type, as: UTF8.self))
            else { return }
            self.addToCurrent(tagType, &source)
        case command.elementsEqual("PERFORMER".utf8):
            self.addToCurrent(self.state == .track ? .artist : .albumArtist, &source)
        case command.elementsEqual("TITLE".utf8):
            if self.state == .header {
                if let value = Self.nextValue(&source) { self.headerTag.add(.album, value) }
            } else if self.state == .track {
                if let value = Self.nextValue(&source) { self.songTag.add(.title, value) }
            }
        case command.elementsEqual("FILE".utf8):
            self.commit()
            guard let name = Self.nextValue(&source), let type = Self.nextToken(&source) else { return }
            guard ["WAVE", "FLAC", "MP3", "AIFF"].contains(where: { type.elementsEqual($0.utf8) }) else {
                self.state = .ignoreFile
                return
            }
            self.state = .wave
            self.filename = TextLines.uri(name)
        case _ where self.state == .ignoreFile:
            return
        case command.elementsEqual("TRACK".utf8):
            self.commit()
            guard let number = Self.nextToken(&source), let type = Self.nextToken(&source) else { return }
            guard type.elementsEqual("AUDIO".utf8) else {
                self.state = .ignoreTrack
                return
            }
            self.state = .track
            self.ignoreIndex = false
            self.current = PlaylistEntry(uri: self.filename)
            self.songTag = self.headerTag
            self.songTag.add(.track, number)
        case _ where self.state == .ignoreTrack:
            return
        case command.elementsEqual("INDEX".utf8) where self.state == .track:
            guard !self.ignoreIndex, let number = Self.nextToken(&source), let text = Self.nextToken(&source),
                let position = Self.position(text)
            else { return }
            let milliseconds = UInt64(UInt32(position))
            if let start = self.previous?.startMilliseconds, start < milliseconds {
                self.previous!.endMilliseconds = milliseconds
            }
            self.current?.startMilliseconds = milliseconds
            if !number.elementsEqual("00".utf8) || self.previous == nil { self.ignoreIndex = true }
        default:
            return
        }
    }

    /// The end of the sheet: every song, in order.
    mutating func finish() -> [PlaylistEntry] {
        self.commit()
        if let previous = self.previous { self.finished.append(previous) }
        self.previous = nil
        return self.finished
    }

    /// The current song is complete: it becomes the previous one (whose end the next `INDEX` may still
    /// set), and the previous one is done.
    private mutating func commit() {
        guard var current = self.current else { return }
        let tag = self.songTag.commit(uri: current.uri)
        self.songTag = TagBuilder()
        current.tags = tag.tags
        current.durationMilliseconds = tag.durationMilliseconds
        if let previous = self.previous { self.finished.append(previous) }
        self.previous = current
        self.current = nil
    }

    /// The tag being built: the header's, or the track's.
    private mutating func addToCurrent(_ type: TagType, _ source: inout ArraySlice<UInt8>) {
        guard let value = Self.nextValue(&source) else { return }
        switch self.state {
        case .header: self.headerTag.add(type, value)
        case .track: self.songTag.add(type, value)
        default: break
        }
    }

    private static func nextToken(_ source: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        source = TextLines.stripLeft(source)
        guard !source.isEmpty else { return nil }
        return Self.nextWord(&source)
    }

    private static func nextWord(_ source: inout ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let end = source.firstIndex(where: TextLines.isWhitespace) ?? source.endIndex
        defer { source = source[end...] }
        return source[..<end]
    }

    private static func nextValue(_ source: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        source = TextLines.stripLeft(source)
        guard let first = source.first else { return nil }
        guard first == UInt8(ascii: "\"") else { return Self.nextWord(&source) }
        source = source.dropFirst()
        guard let end = source.firstIndex(of: UInt8(ascii: "\"")) else {
            defer { source = source[source.endIndex...] }
            return source
        }
        defer { source = source[(end + 1)...] }
        return source[..<end]
    }

    /// `mm:ss:ff` in milliseconds, as `mpd` computes it (32-bit wrapping, then truncated to a signed
    /// 32-bit value), or `nil` when malformed or negative.
    static func position(_ text: ArraySlice<UInt8>) -> Int32? {
        var source = text
        guard let minutes = Self.unsigned(&source), source.first == UInt8(ascii: ":") else { return nil }
        source = source.dropFirst()
        guard let seconds = Self.unsigned(&source), source.first == UInt8(ascii: ":") else { return nil }
        source = source.dropFirst()
        guard let frames = Self.unsigned(&source), source.isEmpty else { return nil }
        let whole = UInt64(minutes &* 60000 &+ seconds &* 1000) &+ UInt64(frames) * 1000 / 75
        let value = Int32(truncatingIfNeeded: whole)
        return value < 0 ? nil : value
    }

    /// Decimal digits as `mpd`'s `cue_next_unsigned` reads them (wrapping at 32 bits), `nil` without one.
    private static func unsigned(_ source: inout ArraySlice<UInt8>) -> UInt32? {
        guard let first = source.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return nil }
        var value: UInt32 = 0
        while let digit = source.first, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
            value = value &* 10 &+ UInt32(digit - UInt8(ascii: "0"))
            source = source.dropFirst()
        }
        return value
    }
}
