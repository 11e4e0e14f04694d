// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `icy`: the input is an HTTP stream's body with ICY metadata. The first byte is the metadata
// interval (`icy-metaint`, 1–256), the second the size of the reads (1–256), the rest the stream. The stream goes
// through `IcyMetaDataParser.parseInPlace` in reads of that size and, again, in one read: both must keep the same
// audio bytes and end with the same tag, no read may keep more than it was given, and every title must be
// cleaned up as mpd's tag builder does (non-empty, no control characters). The whole stream is also parsed as
// one metadata block (`parseTag`).

import Input
import Model

/// Runs `stream` through a new parser in reads of `piece` bytes; returns the audio kept and the last tag.
private func strip(_ stream: [UInt8], metaInterval: Int, piece: Int) -> (audio: [UInt8], tag: [TagItem]?) {
    var parser = IcyMetaDataParser(metaInterval: metaInterval)
    var audio: [UInt8] = []
    var last: [TagItem]?
    var position = 0
    var buffer = [UInt8](repeating: 0, count: piece)
    while position < stream.count {
        let count = min(piece, stream.count - position)
        buffer.replaceSubrange(0..<count, with: stream[position..<(position + count)])
        position += count
        let kept = buffer.withUnsafeMutableBytes {
            parser.parseInPlace(UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]))
        }
        precondition(kept <= count, "kept more than it was given")
        audio += buffer[0..<kept]
        if let tag = parser.readTag() {
            check(tag)
            last = tag
        }
    }
    return (audio, last)
}

private func check(_ tag: [TagItem]) {
    for item in tag {
        precondition(item.type == .title, "a tag other than Title")
        precondition(!item.value.isEmpty && !item.value.utf8.contains { $0 < 0x20 }, "an uncleaned title")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func icyFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(fuzzInput(data, size))
    guard bytes.count >= 2 else { return 0 }
    let metaInterval = Int(bytes[0]) + 1
    let piece = Int(bytes[1]) + 1
    let stream = Array(bytes[2...])
    let pieces = strip(stream, metaInterval: metaInterval, piece: piece)
    let whole = strip(stream, metaInterval: metaInterval, piece: max(1, stream.count))
    precondition(pieces.audio == whole.audio, "the audio depends on the reads' sizes")
    if stream.count > 0, pieces.tag != nil || whole.tag != nil {
        // One read keeps only the last block's tag; reads of any size end with the same last tag.
        precondition(pieces.tag == whole.tag, "the last tag depends on the reads' sizes")
    }
    check(IcyMetaDataParser.parseTag(stream))
    return 0
}
