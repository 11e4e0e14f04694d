// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `filter`: the input is the argument text of a `find`/`search` request (`(Artist == "x") sort
// Title window 0:2`). It is tokenized as the protocol does, split like `findadd` (`position`), parsed as a
// filter selection (window, sort, expressions and legacy pairs, both case-sensitive and folded) and every
// parsed filter is matched against a small library of songs, which runs the string, regex, date, audio
// format, URI/base and `any` matchers.

import MPDProtocol
import Model
import PCRE

/// A song for the matcher: tag values by type, URI, mtime and format, some absent.
struct FuzzSong: FilterSubject {
    let uri: String
    let values: [TagType: [String]]
    let lastModified: Int64?
    let audioFormat: AudioFormat?

    func tagValues(_ type: TagType) -> [String] { self.values[type] ?? [] }

    static let library: [FuzzSong] = [
        FuzzSong(
            uri: "a/01.mp3",
            values: [
                .artist: ["Alpha", "İstanbul"], .title: ["Straße"], .album: ["One"], .track: ["1"],
                .date: ["2001-02-03"], .genre: ["Rock"],
            ],
            lastModified: 1_577_836_800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FuzzSong(
            uri: "a/b/02.flac",
            values: [
                .albumArtist: ["Gamma"], .title: ["ß"], .composer: ["ǅ"], .artistSort: ["Sort"], .disc: ["2"],
                .comment: [""],
            ],
            lastModified: 0, audioFormat: AudioFormat(sampleRate: 96000, sampleFormat: .float, channels: 6)),
        FuzzSong(
            uri: "x\u{1F3B5}/ﬁ.ogg", values: [.name: ["ﬁ"], .performer: ["ŉ"]], lastModified: nil, audioFormat: nil),
        FuzzSong(
            uri: "http://radio.example/stream", values: [:],
            lastModified: -1, audioFormat: AudioFormat(sampleRate: 2_822_400, sampleFormat: .dsd, channels: 1)),
        FuzzSong(
            uri: "top.mp3", values: [.musicBrainzTrackID: ["0f3c"], .label: ["Ünïcödé"]],
            lastModified: Int64.max, audioFormat: AudioFormat(sampleRate: 8000, sampleFormat: .s8, channels: 1)),
    ]
}

@_cdecl("LLVMFuzzerTestOneInput")
public func filterFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let request = try? Tokenizer.tokenize(Array("find ".utf8) + Array(fuzzInput(data, size))) else { return 0 }
    let (arguments, position) = FilterSelection.splitPosition(request.arguments[...])
    if let position { _ = try? ArgumentParser.unsigned(position) }
    for foldCase in [false, true] {
        guard
            let selection = try? FilterSelection.parse(
                arguments: arguments, foldCase: foldCase, regex: RegularExpression.self)
        else { continue }
        _ = selection.filter.base
        _ = selection.filter.hasOtherThanBase
        let matches = FuzzSong.library.filter { selection.filter.matches($0) }
        let window = selection.window.indices(count: matches.count)
        precondition(window.lowerBound >= 0 && window.upperBound <= matches.count, "window outside the results")
    }
    return 0
}
