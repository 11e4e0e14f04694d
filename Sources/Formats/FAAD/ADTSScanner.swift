// SPDX-License-Identifier: GPL-3.0-or-later

import FAAD
import Input

/// How `mpd`'s faad plugin finds ADTS frames and estimates a raw AAC stream's duration, over a `FAADInputBuffer`.
///
/// Nothing here allocates: the frame search runs on the decoder thread for every frame.
enum ADTSScanner {
    /// `mpd`'s buffer size: `FAAD_MIN_STREAMSIZE` (768) × its `MAX_CHANNELS` (8).
    static let bufferCapacity = 768 * 8

    /// The ADTS sampling frequency table.
    private static let sampleRates: [Int] = [
        96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350, 0, 0, 0,
    ]

    /// The frame length if `bytes` (at least 6) starts with an ADTS sync word, else 0.
    static func frameLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count >= 6, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return 0 }
        return Int(bytes[3] & 0x3) << 11 | Int(bytes[4]) << 3 | Int(bytes[5] >> 5)
    }

    /// Moves the buffer's head to the next whole ADTS frame, dropping whatever comes before it (and a last frame
    /// the stream cuts short).
    ///
    /// - Returns: the frame's length, or 0 at the end of the stream.
    static func findFrame(_ buffer: FAADInputBuffer) -> Int {
        while true {
            guard let data = buffer.need(8) else { return 0 }
            guard let marker = data.firstIndex(of: 0xFF) else {
                buffer.clear()
                continue
            }
            if marker > 0 {
                buffer.consume(marker)
                continue
            }
            let length = Self.frameLength(data)
            if length == 0 {
                buffer.consume(1)
                continue
            }
            if buffer.need(length) == nil {
                buffer.clear()
                continue
            }
            return length
        }
    }

    /// mpd's `adts_song_duration`: counts frames from the buffer's head; `nil` when it cannot tell.
    static func adtsDuration(_ buffer: FAADInputBuffer) -> UInt64? {
        let input = buffer.input
        let estimate = !input.isCheapToSeek
        if estimate, input.size == nil { return nil }
        var sampleRate = 0
        var frames: UInt32 = 0
        while true {
            let length = Self.findFrame(buffer)
            if length == 0 { break }
            if frames == 0 {
                sampleRate = Self.sampleRates[Int(buffer.bytes[2] & 0x3C) >> 2]
                if sampleRate == 0 { break }
            }
            buffer.consume(length)
            if estimate, frames == 128 {
                let offset = Int64(input.offset) - Int64(buffer.available)
                guard offset > 0, let size = input.size else { return nil }
                frames = UInt32(truncatingIfNeeded: UInt64(frames) &* size / UInt64(offset))
                break
            }
            frames &+= 1
        }
        guard sampleRate > 0 else { return nil }
        return UInt64(frames) * 1024 * 1000 / UInt64(sampleRate)
    }

    /// mpd's `faad_song_duration`, in milliseconds: skips a leading ID3v2 tag, then counts ADTS frames (and
    /// rewinds to the first) or reads an ADIF header's bit rate; `nil` when neither gives a duration.
    static func songDuration(_ buffer: FAADInputBuffer) -> UInt64? {
        let input = buffer.input
        guard var data = buffer.need(5) else { return nil }
        var tagSize = 0
        if data.count >= 10, data[0] == 0x49, data[1] == 0x44, data[2] == 0x33 {
            // mpd adds the four size bytes without masking their top bits.
            tagSize = Int(data[6]) << 21 | Int(data[7]) << 14 | Int(data[8]) << 7 | Int(data[9])
            tagSize += 10
            guard buffer.skip(tagSize), let next = buffer.need(5) else { return nil }
            data = next
        }
        if data.count >= 8, Self.frameLength(data) > 0 {
            guard input.isSeekable else { return nil }
            let length = Self.adtsDuration(buffer)
            try? input.seek(to: UInt64(tagSize))
            buffer.clear()
            return length
        }
        if data.count >= 5, data[0] == 0x41, data[1] == 0x44, data[2] == 0x49, data[3] == 0x46 {
            guard let size = input.size else { return nil }
            let skip = data[4] & 0x80 != 0 ? 9 : 0
            guard 8 + skip <= data.count else { return nil }
            // mpd's reading of the ADIF bit rate field, bit for bit.
            let bitRate =
                UInt32(data[4 + skip] & 0x0F) << 19 | UInt32(data[5 + skip]) << 11 | UInt32(data[6 + skip]) << 3
                | UInt32(data[7 + skip] & 0xE0)
            // Below 8 bit/s mpd would divide by zero; no duration then.
            guard bitRate / 8 > 0 else { return nil }
            return size * 1000 / UInt64(bitRate / 8)
        }
        return nil
    }
}
