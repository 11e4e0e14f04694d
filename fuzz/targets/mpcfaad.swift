// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `mpcfaad`: the input is a Musepack or raw AAC file (a first byte below 0x80 makes it `.mpc`, else
// `.aac`; the rest is the file). It is written to a scratch file and read as the daemon reads it: `readInfo`,
// `readPicture`, `readComments` through the registry (libmpcdec's stream header, mpd's ADTS frame count and ADIF
// bit rate, libfaad's initialisation, the generic APE/ID3 scan), then the playback decoder: up to 200
// `decode(into:)` calls, and for Musepack seeks to 0, the middle, past the end and a sample from the input, each
// followed by a few decodes. Every call must return whole frames within the buffer.

import Formats
import Input
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func mpcfaadFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let selector = input.first else { return 0 }
    let musepack = selector < 0x80
    let rest = UnsafeRawBufferPointer(rebasing: input[1...])
    let file = [UInt8](rest)
    let path = FuzzScratch.write(rest, to: musepack ? "input.mpc" : "input.aac")
    let plugin: any FormatPlugin = musepack ? MusepackFormat() : FAADFormat()
    let registry = FormatRegistry([plugin])
    if let info = try? registry.readInfo(path: path) {
        precondition(info.audioFormat == nil, "mpd's mpcdec and faad scans report no format")
    }
    _ = try? registry.readPicture(path: path)
    _ = try? registry.readComments(path: path)
    guard var decoder = try? plugin.makeDecoder(input: MemoryInputStream(file)) else { return 0 }
    // mpd's faad plugin cannot seek; only Musepack is sought.
    fuzzPlay(&decoder, chosen: fuzzChosenFrame(input), seeks: musepack)
    return 0
}
