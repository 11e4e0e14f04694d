// SPDX-License-Identifier: GPL-3.0-or-later

/// Hand-built chiptune and tracker files (the same layouts as tools/fixtures/trackers.py).
enum ChiptuneBytes {
    static func padded(_ text: String, _ size: Int) -> [UInt8] {
        let bytes = Array(text.utf8.prefix(size))
        return bytes + [UInt8](repeating: 0, count: size - bytes.count)
    }

    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16((value >> 16) & 0xFFFF) }
    static func be16(_ value: Int) -> [UInt8] { [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }

    /// An NSF of `songs` songs: pulse channel 1 plays a square wave whose pitch depends on the song.
    static func nsf(songs: Int, name: String = "Square Game", artist: String = "Chip Composer") -> [UInt8] {
        let load = 0x8000
        let table = load + 0x40
        var code: [UInt8] = [
            0xAA, 0xA9, 0x0F, 0x8D, 0x15, 0x40, 0xA9, 0xBF, 0x8D, 0x00, 0x40, 0xA9, 0x08, 0x8D, 0x01, 0x40,
            0xBD, UInt8(table & 0xFF), UInt8(table >> 8), 0x8D, 0x02, 0x40, 0xA9, 0x01, 0x8D, 0x03, 0x40, 0x60,
        ]
        let play = load + code.count
        code.append(0x60)
        code += [UInt8](repeating: 0, count: 0x40 - code.count) + [0xFD, 0x7E, 0x50, 0x3F]
        var header: [UInt8] = Array("NESM".utf8) + [0x1A, 1, UInt8(songs), 1]
        header += le16(load) + le16(load) + le16(play)
        header += padded(name, 32) + padded(artist, 32) + padded("1987 Soft", 32)
        header += le16(16639) + [UInt8](repeating: 0, count: 8) + le16(19997) + [0, 0, 0, 0, 0, 0]
        return header + code
    }

    /// A VGM 1.50 of the SN76489 PSG lasting `seconds`, with a GD3 tag naming the track "Tone Track".
    static func vgm(seconds: Int = 2) -> [UInt8] {
        let total = seconds * 44100
        var data: [UInt8] = [0x50, 0x90, 0x50, 0xBF, 0x50, 0xDF, 0x50, 0xFF, 0x50, 0x8E, 0x50, 0x0F]
        data += [0x61] + le16(total / 2)
        data += [0x50, 0x8F, 0x50, 0x07, 0x61] + le16(total - total / 2) + [0x66]
        var text: [UInt8] = []
        for field in [
            "Tone Track", "", "PSG Game", "", "Sega Master System", "", "VGM Author", "", "1991", "", "Notes",
        ] {
            for unit in field.utf16 { text += le16(Int(unit)) }
            text += [0, 0]
        }
        let gd3 = Array("Gd3 ".utf8) + le32(0x100) + le32(text.count) + text
        var header = [UInt8](repeating: 0, count: 0x40)
        func put(_ bytes: [UInt8], at offset: Int) {
            header.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        }
        let gd3At = 0x40 + data.count
        put(Array("Vgm ".utf8), at: 0)
        put(le32(gd3At + gd3.count - 4), at: 4)
        put(le32(0x150), at: 8)
        put(le32(3_579_545), at: 0x0C)
        put(le32(gd3At - 0x14), at: 0x14)
        put(le32(total), at: 0x18)
        put(le32(60), at: 0x24)
        put(le16(9) + [16], at: 0x28)
        put(le32(0x40 - 0x34), at: 0x34)
        return header + data + gd3
    }

    /// A 4-channel ProTracker module of one 64-row pattern (7.68 s at the default speed) with a looped sine.
    static func protracker(title: String = "fermata tune") -> [UInt8] {
        let wave: [UInt8] = (0..<32).map { i in
            UInt8(bitPattern: Int8((100 * sin(2 * Double.pi * Double(i) / 32)).rounded()))
        }
        var header = padded(title, 20)
        header += padded("sine", 22) + be16(wave.count / 2) + [0, 64] + be16(0) + be16(wave.count / 2)
        for _ in 1..<31 { header += padded("", 22) + be16(0) + [0, 0] + be16(0) + be16(1) }
        header += [1, 127] + [UInt8](repeating: 0, count: 128) + Array("M.K.".utf8)
        var pattern = [UInt8](repeating: 0, count: 64 * 4 * 4)
        for (row, channel, period) in [(0, 0, 428), (16, 1, 320), (32, 0, 214), (48, 1, 285)] {
            let at = (row * 4 + channel) * 4
            pattern.replaceSubrange(at..<(at + 4), with: [UInt8(period >> 8), UInt8(period & 0xFF), 0x10, 0])
        }
        return header + pattern + wave
    }
}

#if canImport(Glibc)
    import Glibc
#endif
