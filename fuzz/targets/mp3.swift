// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `mp3`: the input is a `.mp3` file. It is written to a scratch file, opened with the playback
// decoder (`MP3Format.makeDecoder`, libmad behind it) and decoded as the player does: a bounded number of
// `decode(into:)` calls, then seeks to the start, the middle, past the end and to a frame taken from the
// input, each followed by a few more decodes. Every call must return whole frames within the buffer.

import Formats
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func mp3FuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let path = FuzzScratch.write(input, to: "input.mp3")
    guard var decoder = try? MP3Format().makeDecoder(path: path) else { return 0 }
    fuzzPlay(&decoder, chosen: fuzzChosenFrame(input))
    return 0
}
