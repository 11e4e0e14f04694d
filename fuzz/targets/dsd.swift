// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `dsd`: the input is a DSF, DSDIFF or Hybrid-DSD (`.m4a`) file. The three plugins read it: written to a scratch file for
// `readInfo`, `readPicture` and `readComments` (header chunks, the ID3 tag, DSDIFF's native tags found by mpd
// 0.23.12's skips), then decoded from memory as the player does: a bounded number of `decode(into:)` calls,
// then seeks to the start, the middle, past the end and to a frame taken from the input, each followed by a
// few more decodes. Every call must return whole frames within the buffer.

import Formats
import Input
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func dsdFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let bytes = Array(input)
    let plugins: [(any FormatPlugin, String)] = [
        (DSFFormat(), "input.dsf"), (DSDIFFFormat(), "input.dff"),
        (DSDIFFFormat(leastSignificantBitFirst: true), "input.dff"), (HybridDSDFormat(), "input.m4a"),
    ]
    for (plugin, name) in plugins {
        let path = FuzzScratch.write(input, to: name)
        if let info = try? plugin.readInfo(path: path) {
            precondition(info.audioFormat == nil && plugin.name != "hybrid_dsd", "DSD scans report no format")
        }
        _ = try? plugin.readPicture(path: path)
        _ = try? plugin.readComments(path: path)
        guard var decoder = try? plugin.makeDecoder(input: MemoryInputStream(bytes)) else { continue }
        precondition(decoder.format.sampleFormat == .dsd && decoder.format.channels > 0, "not DSD")
        fuzzPlay(&decoder, calls: 64, chosen: fuzzChosenFrame(input))
    }
    return 0
}
