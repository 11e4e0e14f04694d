// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `ffmpeg`: the first input byte chooses a file name suffix (`m4a`, `mp4`, `wma`, `mka`, `webm`,
// `ape`, `tta`, `ac3`: FFmpeg's probe scores the name's extension too), the rest is the file. It is written to
// a scratch file and read the ways the daemon reads it: `FFmpegFormat.readInfo` (libavformat's demuxers,
// stream information, mpd's metadata mapping through `FFmpegTags` and `TagCollector`, duration, format),
// `readPicture` (attached pictures), `readComments`; then the playback decoder over a memory stream, a bounded
// number of `decode(into:)` calls, and seeks to the start, the middle, past the end and a frame taken from the
// input, each followed by a few decodes. Every call must return whole frames within the buffer.

import Formats
import Input
import Model

private let suffixes = ["m4a", "mp4", "wma", "mka", "webm", "ape", "tta", "ac3"]
@_cdecl("LLVMFuzzerTestOneInput")
public func ffmpegFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let first = input.first else { return 0 }
    let suffix = suffixes[Int(first) % suffixes.count]
    let file = Array(input.dropFirst())
    let path = file.withUnsafeBytes { FuzzScratch.write($0, to: "input." + suffix) }
    let format = FFmpegFormat()
    if let info = try? format.readInfo(path: path) {
        precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "an empty audio format")
        precondition(info.tags.allSatisfy { !$0.value.isEmpty }, "an empty tag value")
    }
    _ = try? format.readPicture(path: path)
    _ = try? format.readComments(path: path)
    guard var decoder = try? format.makeDecoder(input: MemoryInputStream(file, uri: path)) else { return 0 }
    fuzzPlay(&decoder, chosen: fuzzChosenFrame(UnsafeRawBufferPointer(rebasing: input[1...])))
    return 0
}
