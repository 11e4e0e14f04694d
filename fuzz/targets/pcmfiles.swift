// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `pcmfiles`: the input's first byte picks a suffix (`wav`, `aiff`, `au`, `wv`), the rest is the
// file. It is read the ways the daemon reads song files through the registry — `readInfo` (libsndfile or
// libwavpack, then the generic scan: APEv2, and ID3 at the start, in a RIFF `id3 `/`ID3 ` or AIFF `ID3 `
// chunk, or at the end), `readPicture`, `readComments` — then decoded from memory: a bounded number of
// `decode(into:)` calls, seeks to the start, the middle, past the end and a frame taken from the input,
// each followed by a few decodes. Every call must stay inside its buffer.

import Formats
import Input
import Model

private let suffixes = ["wav", "aiff", "au", "wv"]
@_cdecl("LLVMFuzzerTestOneInput")
public func pcmfilesFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let selector = input.first else { return 0 }
    let suffix = suffixes[Int(selector) % suffixes.count]
    let file = UnsafeRawBufferPointer(rebasing: input[1...])
    let path = FuzzScratch.write(file, to: "input.\(suffix)")
    let registry = FormatRegistry.standard
    if let info = try? registry.readInfo(path: path, enabledTags: .defaultMetadata) {
        precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "an empty audio format")
    }
    _ = try? registry.readPicture(path: path)
    _ = try? registry.readComments(path: path)
    guard let plugin = registry.plugin(forSuffix: suffix),
        var decoder = try? plugin.makeDecoder(input: MemoryInputStream(Array(file), uri: path))
    else { return 0 }
    fuzzPlay(&decoder, calls: 64, callsAfterSeek: 4, chosen: fuzzChosenFrame(file))
    return 0
}
