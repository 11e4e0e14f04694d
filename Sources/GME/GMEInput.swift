// SPDX-License-Identifier: GPL-3.0-or-later

import Zlib

/// What `GMEEmulator` does to a file's bytes before libgme sees them: gzip files (`.vgz`) are inflated, as
/// libgme's own file reader does, and VGM command streams are checked for the sample-data reads libgme 0.6.3
/// does not bound (a PCM seek or PCM write outside the file makes it read wild memory and crash; chip clocks
/// far from any real chip's make it fail an assertion and abort).
enum GMEInput {
    /// The largest inflated size accepted.
    static let inflatedLimit = 100 * 1024 * 1024

    /// The largest SN76489 or YM2612 clock accepted, in Hz: real chips run at 3.5 to 8 MHz. With the PSG
    /// clocked at 12 MHz, waits of 65535 samples make libgme 0.6.3 fail `Blip_Buffer::end_frame`'s assertion
    /// (10 MHz was the highest found to pass), and a YM2612's cost grows with its clock (at 100 MHz it decodes
    /// three times slower than real time; at 4 GHz it never ends).
    static let chipClockLimit = 8_000_000

    /// The bytes libgme should load for an emulator running at `sampleRate` Hz.
    ///
    /// - Throws: `GMEError` for a corrupt gzip stream or a VGM libgme would read outside of or abort on.
    static func prepared(_ data: [UInt8], sampleRate: Int) throws(GMEError) -> [UInt8] {
        var bytes = data
        if bytes.count >= 2, bytes[0] == 0x1F, bytes[1] == 0x8B { bytes = try Self.inflate(bytes) }
        if bytes.starts(with: Array("Vgm ".utf8)) { try Self.checkVGM(bytes, sampleRate: sampleRate) }
        return bytes
    }

    /// Inflates a gzip stream (several members are read one after the other; a truncated one gives what it
    /// holds, as libgme's reader does).
    static func inflate(_ data: [UInt8]) throws(GMEError) -> [UInt8] {
        do {
            return try Gzip.inflate(data, limit: Self.inflatedLimit, acceptsTruncation: true)
        } catch {
            throw GMEError(function: "inflate", message: "corrupt or too large gzip data")
        }
    }

    /// Walks a VGM's commands from where libgme 0.6.3 starts (0x40, or from version 1.50 on the header's data
    /// offset, relative to its field at 0x34, when it is not 0) to its end command, then its loop once
    /// more, with libgme's command lengths, and refuses the file if a PCM seek or PCM write would read
    /// outside it, if the loop writes PCM before seeking (the position would grow without bound), or if it
    /// writes to a YM2612 its header gives no clock for, to any FM chip in a file without one, or to a second
    /// SN76489 its header does not declare; and
    /// refuses a header whose chip clocks libgme cannot run at `sampleRate` Hz.
    static func checkVGM(_ data: [UInt8], sampleRate: Int) throws(GMEError) {
        let size = data.count
        guard size > 0x40 else { return }  // libgme refuses it itself.
        func le32(_ at: Int) -> Int {
            guard at + 4 <= size else { return 0 }
            return Int(data[at]) | Int(data[at + 1]) << 8 | Int(data[at + 2]) << 16 | Int(data[at + 3]) << 24
        }
        let reject = GMEError(function: "gme_load_data", message: "VGM sample data outside the file")
        // libgme sets up a YM2612 only when the header gives its clock (0x2C; before version 1.10 the 0x10 clock
        // serves both FM chips); a YM2612 write (0x52, 0x53) to a file without one makes gme_start_track read
        // uninitialised memory (fuzz/README.md).
        let ym2612Clock = le32(0x2C) != 0 ? le32(0x2C) : (le32(0x08) < 0x110 ? le32(0x10) : 0)
        let hasYM2612 = ym2612Clock != 0
        let noChip = GMEError(function: "gme_load_data", message: "VGM writes to a YM2612 it has no clock for")
        try Self.checkClocks(psg: le32(0x0C), ym2612: ym2612Clock, sampleRate: sampleRate)
        // libgme writes to its second SN76489 (0x30, 0x3F) whatever the header says, but ends its frame only when
        // the clock's dual-chip flag (bit 30) is set: the next frame's first write then runs the chip backwards
        // and fails `Sms_Apu::run_until`'s assertion (fuzz/regressions/trackers/vgz-second-psg-undeclared-e92d9022).
        let hasSecondPSG = le32(0x0C) & 0x4000_0000 != 0
        // With no FM chip at all (no YM2612 or YM2413 clock) libgme never sets its FM clock's offset, and a write to
        // any FM chip runs that chip to a time computed from uninitialised memory (valgrind, probed in C), then
        // writes to an emulator it never set up (fuzz/regressions/trackers/vgm-second-ym2612-without-fm-58053df9:
        // a SEGV in gme_play). With one, writes to chips it did not enable are ignored.
        let hasFM = hasYM2612 || le32(0x10) != 0
        let noFM = GMEError(function: "gme_load_data", message: "VGM writes to an FM chip it has no clock for")
        let noSecondPSG = GMEError(
            function: "gme_load_data", message: "VGM writes to a second SN76489 it does not have")
        let loopOffset = le32(0x1C)
        let loopStart = loopOffset != 0 ? loopOffset + 0x1C : nil
        var pcmData = 0x40
        var pcmPosition = 0x40
        // libgme reads the commands from the data offset (fuzz/regressions/trackers/vgz-data-offset-77bafc1b: its
        // YM2612 writes lie past 0x40, after an end command).
        let dataOffset = le32(0x34)
        var position = le32(0x08) >= 0x150 && dataOffset != 0 ? 0x34 + dataOffset : 0x40
        var pass = 0
        var seekedInLoop = false
        var pcmReadInLoop = false
        while pass < 3 {
            guard position < size else {
                // libgme ends the track when the stream runs out (or jumps to the loop at the end command).
                break
            }
            let command = data[position]
            position += 1
            switch command {
            case 0x66:
                guard let loopStart, loopStart < size else { return }
                position = loopStart
                pass += 1
                if pass == 2 && pcmReadInLoop && !seekedInLoop { throw reject }
                seekedInLoop = false
                pcmReadInLoop = false
                continue
            case 0x67:
                let type = position + 1 < size ? data[position + 1] : 0xFF
                let blockSize = le32(position + 2)
                position += 6
                if type == 0 { pcmData = position }
                position += blockSize
            case 0xE0:
                pcmPosition = pcmData + le32(position)
                position += 4
                seekedInLoop = true
            case 0x52, 0x53:
                guard hasYM2612 else { throw noChip }
                position += 2
            case 0x51, 0xA1, 0xA3:
                guard hasFM else { throw noFM }
                position += 2
            case 0xA2:
                // A write to the DAC port (0x2A) is a PCM sample, played without the FM chip.
                guard hasFM || (position < size && data[position] == 0x2A) else { throw noFM }
                position += 2
            case 0x30, 0x3F:
                guard hasSecondPSG else { throw noSecondPSG }
                position += 1
            case 0x4F, 0x50, 0x64: position += 1
            case 0x61: position += 2
            case 0x62, 0x63: break
            default:
                switch command & 0xF0 {
                case 0x80:
                    guard pcmPosition >= 0, pcmPosition < size else { throw reject }
                    pcmPosition += 1
                    if !seekedInLoop { pcmReadInLoop = true }
                case 0x70: break
                case 0x30, 0x40: position += 1
                case 0x50, 0xA0, 0xB0: position += 2
                case 0xC0, 0xD0: position += 3
                case 0xE0, 0xF0: position += 4
                default: break
                }
            }
        }
    }

    /// Refuses the clocks (as the header gives them) libgme 0.6.3 aborts or never ends on. It keeps the
    /// SN76489's low 28 bits (above them: the dual-chip and T6W28 flags) and takes 0 for its default 3579545 Hz,
    /// but a clock
    /// below the output rate makes `Blip_Buffer::end_frame` or `Dual_Resampler::play_frame_` fail an
    /// assertion, and a clock of 0 once the flags are off fails `Blip_Buffer::clock_rate_factor`'s
    /// (fuzz/regressions/trackers). A YM2612 clock is used as it stands.
    static func checkClocks(psg: Int, ym2612: Int, sampleRate: Int) throws(GMEError) {
        if psg != 0 {
            let clock = psg & 0x0FFF_FFFF
            guard clock >= sampleRate, clock <= Self.chipClockLimit else {
                throw GMEError(function: "gme_load_data", message: "VGM SN76489 clock out of range: \(clock) Hz")
            }
        }
        guard ym2612 <= Self.chipClockLimit else {
            throw GMEError(function: "gme_load_data", message: "VGM YM2612 clock out of range: \(ym2612) Hz")
        }
    }
}
