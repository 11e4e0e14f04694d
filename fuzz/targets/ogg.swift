// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `ogg`: the input is an Ogg file (Vorbis or Opus). It is written to a scratch file and read as the
// daemon reads `.ogg` and `.opus` songs: `readInfo`, `readPicture` and `readComments` of the vorbis and opus
// plugins (libogg's page walk, libvorbis's header parsing, `mpd`'s OpusHead/OpusTags parsing, Vorbis comments,
// METADATA_BLOCK_PICTURE), then each plugin's playback decoder: a bounded number of `decode(into:)` calls, and
// seeks to the start, the middle, past the end and to a frame taken from the input, each followed by a few more
// decodes. Every call must return whole frames within the buffer.

import Formats
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func oggFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let path = FuzzScratch.write(input, to: "input.ogg")
    let plugins: [any FormatPlugin] = [VorbisFormat(), OpusFormat()]
    for plugin in plugins {
        if let info = try? plugin.readInfo(path: path) {
            precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "empty format")
        }
        _ = try? plugin.readPicture(path: path)
        _ = try? plugin.readComments(path: path)
        guard var decoder = try? plugin.makeDecoder(path: path) else { continue }
        fuzzPlay(&decoder, calls: 100, chosen: fuzzChosenFrame(input))
    }
    return 0
}
