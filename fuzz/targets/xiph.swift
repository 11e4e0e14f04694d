// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `xiph`: the input is an Ogg comment packet (`OpusTags`, vendor string, entries), as the Opus
// plugin reads it and as FLAC and Vorbis comment blocks hold their entries. Every entry goes through
// `mpd`'s Vorbis comment rules the plugins apply: the tag mapping in both name orders, the `readcomments`
// pair, ReplayGain, MixRamp, and `METADATA_BLOCK_PICTURE` (base64 of a picture block); the tag values then
// through the tag builder's clean-ups. The whole input is also read as a raw picture block.

import Formats
import ID3Tag
import Model

@_cdecl("LLVMFuzzerTestOneInput")
public func xiphFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(fuzzInput(data, size))
    _ = PictureBlock.picture(bytes[...])
    let magic = Array("OpusTags".utf8)
    let packet = bytes.starts(with: magic) ? bytes : magic + bytes
    guard let entries = CommentPacket.entries(packet[...], magic: magic) else { return 0 }
    var raw: [RawTagItem] = []
    var replayGain = ReplayGainInfo()
    for entry in entries {
        if let item = VorbisComment.tagItem(entry) { raw.append(item) }
        VorbisComment.applyReplayGain(entry, to: &replayGain)
        _ = VorbisComment.mixRamp(entry)
        if let (name, value) = VorbisComment.pair(entry) {
            if let type = VorbisComment.opusTagType(name: name) { raw.append(RawTagItem(type, Array(value))) }
            if let picture = VorbisComment.value(of: entry, named: Array("metadata_block_picture".utf8)) {
                _ = VorbisComment.picture(base64: picture)
            }
        }
    }
    for item in TagCollector.tagItems(raw) {
        precondition(!item.value.isEmpty && !item.value.utf8.contains { $0 < 0x20 }, "an uncleaned value")
    }
    return 0
}
