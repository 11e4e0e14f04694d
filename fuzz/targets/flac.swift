// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `flac`: the input is a FLAC file. It is written to a scratch file twice, as `input.flac` for the
// `flac` plugin and as `input.oga` for the `oggflac` plugin (so Ogg FLAC inputs reach libFLAC's Ogg layer),
// and each is read as the daemon reads songs: `readInfo`, `readPicture`, `readComments` (libFLAC's metadata
// chain), then the playback decoder (libFLAC's stream decoder through an `InputStream`): a bounded number of
// `decode(into:)` calls, then seeks to the start, the middle, past the end and to a frame taken from the
// input, each followed by a few more decodes. Every call must return whole frames within the buffer.

import Formats
import Model

private func exercise(_ format: some FormatPlugin, path: String, chosen: UInt64) {
    if let info = try? format.readInfo(path: path) {
        precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "an empty audio format")
    }
    _ = try? format.readPicture(path: path)
    _ = try? format.readComments(path: path)
    guard var decoder = try? format.makeDecoder(path: path) else { return }
    fuzzPlay(&decoder, chosen: chosen)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func flacFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let chosen = fuzzChosenFrame(input)
    exercise(FLACFormat(), path: FuzzScratch.write(input, to: "input.flac"), chosen: chosen)
    exercise(OggFLACFormat(), path: FuzzScratch.write(input, to: "input.oga"), chosen: chosen)
    return 0
}
