// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `id3`: the input is a `.mp3` file. It is written to a scratch file and read the three ways the
// daemon reads song files: `readInfo` (libmad's first-frame scan or libmpg123's, APEv2 and ID3 tags through
// libid3tag, ReplayGain, tag mapping), `readPicture` (`APIC`) and `readComments` (APE items, `TXXX`).

import Formats
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func id3FuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let path = FuzzScratch.write(fuzzInput(data, size), to: "input.mp3")
    let format = FormatRegistry([MP3Format(), MP3Format(scan: .mpg123)])
    if let info = try? format.readInfo(path: path) {
        precondition(info.audioFormat.map { $0.sampleRate > 0 && $0.channels > 0 } ?? true, "an empty audio format")
    }
    _ = try? format.readPicture(path: path)
    _ = try? format.readComments(path: path)
    return 0
}
