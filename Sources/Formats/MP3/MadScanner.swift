// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Model

/// What `mpd` 0.23's mad plugin reports when it scans an MPEG audio file.
struct MadScanResult: Sendable, Hashable {
    /// The duration in milliseconds (`Time:`/`duration:`).
    var durationMilliseconds: UInt64
    /// The sample rate of the first decoded frame.
    var sampleRate: Int
    /// 1 for single-channel frames, else 2.
    var channels: Int
    /// The layer of the first decoded frame (2 or 3).
    var layer: Int
    /// Offset of the first decoded frame, as the plugin computes it.
    var firstFrameOffset: Int
    /// The Xing/Info frame count, when the first frame carried one.
    var xingFrames: UInt32?
    /// The ReplayGain the plugin submits from a LAME tag after the Xing/Info header, when it finds one.
    var lameReplayGain: ReplayGainInfo?
}

/// Where the scan reads its bytes: positional reads and a size (`Int.max` when unknown).
protocol MadScanSource {
    /// The size in bytes, or `Int.max` when the stream does not say.
    var size: Int { get }
    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end or on any failure.
    func scanRead(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int
}

extension TagSourceFile: MadScanSource {
    func scanRead(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        (try? self.read(at: offset, into: buffer)) ?? 0
    }
}

/// Reproduces the scan of `mpd` 0.23's mad decoder plugin (`MadDecoder::RunScan`) without libmad.
///
/// The plugin feeds libmad a 40960-byte buffer, lets it find the first decodable layer II/III frame
/// (skipping ID3 tags found where a frame header was expected), then takes the duration from the frame count
/// of a Xing/Info header in that frame's ancillary data, or else estimates it from the bytes left in the file
/// and the first frame's bit rate. This type re-implements the parts of libmad's stream synchronisation,
/// header decoding, layer III side-information checks and bit reservoir that decide which frame that is,
/// byte for byte including buffer refills (after a refill libmad trusts the next position to be a frame
/// start) and the 8 zero bytes appended at end of file. It does not run libmad's Huffman decoding, so a
/// frame libmad would reject only there (corrupt main data) is accepted here.
struct MadScanner {
    private static let bufferSize = 40960
    private static let guardSize = 8
    private static let mainDataCapacity = 511 + 2048 + 8
    private static let maximumFrames = 8 * 1024 * 1024
    private static let framesCushion: UInt64 = 2000

    private enum MadError { case none, bufferLength, lostSync, badLayer, badBitRate, badSampleRate, frame }
    private enum Action { case skip, stop, again, ok }

    private struct Header {
        var layer = 0
        var lsf = false
        var mpeg25 = false
        var protection = false
        var bitRate = 0
        var sampleRate = 0
        var padding = false
        var singleChannel = false
        var freeFormat = false
        var modeBits = 0
        var modeExtension = 0

        var channels: Int { self.singleChannel ? 1 : 2 }
        var samplesPerFrame: Int { 32 * (self.layer == 1 ? 12 : (self.layer == 3 && self.lsf ? 18 : 36)) }
    }

    private let file: any MadScanSource
    private var fileOffset = 0
    private var buffer: [UInt8]
    private var bufferLength = 0
    private var hasBuffer = false
    private var thisFrame = 0
    private var nextFrame: Int?
    private var inSync = false
    private var skipLength = 0
    private var error = MadError.none
    private var freeRate = 0
    private var wasEOF = false
    private var reservoir: [UInt8]
    private var reservoirLength = 0
    private var firstLayer = 0
    private var header = Header()
    private var ancillary: [UInt8] = []
    private var ancillaryBitOffset = 0
    private var ancillaryBitLength = 0

    private init(file: any MadScanSource) {
        self.file = file
        self.buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        self.reservoir = [UInt8](repeating: 0, count: Self.mainDataCapacity)
    }

    /// Scans `file` like the mad plugin.
    ///
    /// - Returns: `nil` where the plugin fails (no decodable frame, or an absurd frame count), so `mpd` would
    ///   try its next decoder plugin.
    static func scan(_ file: any MadScanSource) -> MadScanResult? {
        var scanner = MadScanner(file: file)
        return scanner.run()
    }

    private mutating func run() -> MadScanResult? {
        decoding: while true {
            switch self.decodeNextFrame() {
            case .skip, .again: continue
            case .stop: return nil
            case .ok: break decoding
            }
        }
        let header = self.header
        let frameOffset = self.fileOffset - (self.bufferLength - self.thisFrame)
        let rest = UInt64(max(0, self.file.size - frameOffset))
        let frameMilliseconds = UInt64(header.samplesPerFrame * 1000 / header.sampleRate)
        var duration = rest * 1000 / UInt64(header.bitRate / 8)
        var maxFrames = (frameMilliseconds > 0 ? duration / frameMilliseconds : 0) + Self.framesCushion
        var xingFrames: UInt32?
        var lameReplayGain: ReplayGainInfo?
        if var xing = self.parseXing() {
            if xing.flags & 1 != 0, xing.frames != 0 {
                duration = UInt64(xing.frames) * UInt64(header.samplesPerFrame) * 1000 / UInt64(header.sampleRate)
                maxFrames = UInt64(xing.frames)
                xingFrames = xing.frames
            }
            lameReplayGain = Self.parseLame(&xing.bits, bitLength: xing.bitLength)
        }
        guard maxFrames > 0, maxFrames <= UInt64(Self.maximumFrames) else { return nil }
        return MadScanResult(
            durationMilliseconds: duration, sampleRate: header.sampleRate, channels: header.channels,
            layer: header.layer, firstFrameOffset: frameOffset, xingFrames: xingFrames,
            lameReplayGain: lameReplayGain)
    }

    // MARK: - The plugin's loop (DecodeNextFrame / FillBuffer / ParseId3)

    private mutating func decodeNextFrame() -> Action {
        if !self.hasBuffer || self.error == .bufferLength {
            guard self.fillBuffer() else { return .stop }
        }
        guard self.decodeHeader() else {
            if self.error == .bufferLength { return .again }
            if self.error == .lostSync {
                let available = min(self.bufferLength - self.thisFrame, ID3Tag.querySize)
                let tagSize = self.buffer.withUnsafeBytes { raw in
                    ID3Tag.query(UnsafeRawBufferPointer(rebasing: raw[self.thisFrame..<(self.thisFrame + available)]))
                }
                if tagSize > 0 {
                    self.skipID3(tagSize)
                    return .again
                }
            }
            return .skip
        }
        if self.firstLayer == 0 {
            guard self.header.layer == 2 || self.header.layer == 3 else { return .skip }
            self.firstLayer = self.header.layer
        } else if self.header.layer != self.firstLayer {
            return .skip
        }
        return self.decodeFrame() ? .ok : .skip
    }

    private mutating func fillBuffer() -> Bool {
        var rest = 0
        if let next = self.nextFrame {
            rest = self.bufferLength - next
            if rest > 0 && next > 0 {
                for index in 0..<rest { self.buffer[index] = self.buffer[next + index] }
            }
        }
        let maxRead = Self.bufferSize - rest
        if maxRead == 0 { return false }
        let (file, offset) = (self.file, self.fileOffset)
        var count = self.buffer.withUnsafeMutableBytes { raw in
            file.scanRead(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: raw[rest...]))
        }
        self.fileOffset += count
        if count == 0 {
            if self.wasEOF || maxRead < Self.guardSize { return false }
            self.wasEOF = true
            for index in rest..<(rest + Self.guardSize) { self.buffer[index] = 0 }
            count = Self.guardSize
        }
        // mad_stream_buffer: a fresh buffer is assumed to start at a frame.
        self.bufferLength = rest + count
        self.thisFrame = 0
        self.nextFrame = 0
        self.inSync = true
        self.hasBuffer = true
        self.error = .none
        return true
    }

    private mutating func skipID3(_ size: Int) {
        let inBuffer = self.bufferLength - self.thisFrame
        if size <= inBuffer {
            self.skipLength += size
        } else {
            self.skipLength += inBuffer
            self.fileOffset = min(self.fileOffset + (size - inBuffer), max(self.file.size, self.fileOffset))
        }
    }

    // MARK: - libmad's header decoding

    private func isSyncWord(_ position: Int) -> Bool {
        self.buffer[position] == 0xFF && self.buffer[position + 1] & 0xE0 == 0xE0
    }

    private mutating func fail(_ error: MadError) -> Bool {
        self.error = error
        self.inSync = false
        return false
    }

    private mutating func decodeHeader() -> Bool {
        guard var position = self.nextFrame else { return self.fail(.frame) }
        let end = self.bufferLength
        if self.skipLength > 0 {
            if !self.inSync { position = self.thisFrame }
            if end - position < self.skipLength {
                self.skipLength -= end - position
                self.nextFrame = end
                return self.fail(.bufferLength)
            }
            position += self.skipLength
            self.skipLength = 0
            self.inSync = true
        }
        while true {
            if self.inSync {
                if end - position < Self.guardSize {
                    self.nextFrame = position
                    return self.fail(.bufferLength)
                }
                if end - position >= 2 && !self.isSyncWord(position) {
                    self.thisFrame = position
                    self.nextFrame = position + 1
                    return self.fail(.lostSync)
                }
            } else {
                var candidate = position
                while candidate < end - 1 && !self.isSyncWord(candidate) { candidate += 1 }
                if end - candidate < Self.guardSize {
                    if let next = self.nextFrame, end - next >= Self.guardSize { self.nextFrame = end - Self.guardSize }
                    return self.fail(.bufferLength)
                }
                position = candidate
            }
            self.error = .none
            self.thisFrame = position
            self.nextFrame = position + 1
            guard let decoded = self.decodeHeaderBits(at: position) else { return false }
            var header = decoded
            if header.bitRate == 0 {
                if self.freeRate == 0 || !self.inSync || (header.layer == 3 && self.freeRate > 640_000) {
                    guard self.findFreeBitRate(header, from: position + (header.protection ? 6 : 4)) else {
                        return self.fail(.lostSync)
                    }
                }
                header.bitRate = self.freeRate
                header.freeFormat = true
            }
            let pad = header.padding ? 1 : 0
            let length: Int
            if header.layer == 1 {
                length = (12 * header.bitRate / header.sampleRate + pad) * 4
            } else {
                let slots = header.layer == 3 && header.lsf ? 72 : 144
                length = slots * header.bitRate / header.sampleRate + pad
            }
            if length + Self.guardSize > end - self.thisFrame {
                self.nextFrame = self.thisFrame
                return self.fail(.bufferLength)
            }
            self.nextFrame = self.thisFrame + length
            if !self.inSync {
                let next = self.thisFrame + length
                if end - next >= 2 && !self.isSyncWord(next) {
                    position = self.thisFrame + 1
                    self.nextFrame = position
                    continue
                }
                self.inSync = true
            }
            self.header = header
            return true
        }
    }

    private static let bitRates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ]
    private static let sampleRates = [44100, 48000, 32000]

    /// Decodes the 4-byte header at `position`; on failure sets the error and leaves sync.
    private mutating func decodeHeaderBits(at position: Int) -> Header? {
        let word =
            UInt32(self.buffer[position]) << 24 | UInt32(self.buffer[position + 1]) << 16
            | UInt32(self.buffer[position + 2]) << 8 | UInt32(self.buffer[position + 3])
        guard let header = Self.parseHeader(word) else {
            let bits = (word >> 19) & 3
            let error: MadError =
                (bits == 1)
                ? .lostSync
                : ((word >> 17) & 3 == 0) ? .badLayer : ((word >> 12) & 15 == 15) ? .badBitRate : .badSampleRate
            _ = self.fail(error)
            return nil
        }
        return header
    }

    /// Parses a header word the way libmad's `decode_header` does; `nil` when libmad rejects it.
    private static func parseHeader(_ word: UInt32) -> Header? {
        var header = Header()
        header.mpeg25 = (word >> 20) & 1 == 0
        let id = (word >> 19) & 1
        if id == 0 {
            header.lsf = true
        } else if header.mpeg25 {
            return nil
        }
        header.layer = 4 - Int((word >> 17) & 3)
        if header.layer == 4 { return nil }
        header.protection = (word >> 16) & 1 == 0
        let bitRateIndex = Int((word >> 12) & 15)
        if bitRateIndex == 15 { return nil }
        let table = header.lsf ? 3 + (header.layer >> 1) : header.layer - 1
        header.bitRate = Self.bitRates[table][bitRateIndex] * 1000
        let rateIndex = Int((word >> 10) & 3)
        if rateIndex == 3 { return nil }
        header.sampleRate = Self.sampleRates[rateIndex]
        if header.lsf {
            header.sampleRate /= 2
            if header.mpeg25 { header.sampleRate /= 2 }
        }
        header.padding = (word >> 9) & 1 == 1
        header.modeBits = Int((word >> 6) & 3)
        header.singleChannel = header.modeBits == 3
        header.modeExtension = Int((word >> 4) & 3)
        return header
    }

    /// libmad's `free_bitrate`: the distance to the next header of the same layer and rate gives the rate.
    private mutating func findFreeBitRate(_ header: Header, from start: Int) -> Bool {
        let end = self.bufferLength
        let pad = header.padding ? 1 : 0
        let slots = header.layer == 3 && header.lsf ? 72 : 144
        var rate = 0
        var position = start
        while true {
            while position < end - 1 && !self.isSyncWord(position) { position += 1 }
            if end - position < Self.guardSize { break }
            let word =
                UInt32(self.buffer[position]) << 24 | UInt32(self.buffer[position + 1]) << 16
                | UInt32(self.buffer[position + 2]) << 8 | UInt32(self.buffer[position + 3])
            if let peek = Self.parseHeader(word), peek.layer == header.layer, peek.sampleRate == header.sampleRate {
                let distance = position - self.thisFrame
                if header.layer == 1 {
                    rate = header.sampleRate * (distance - 4 * pad + 4) / 48 / 1000
                } else {
                    rate = header.sampleRate * (distance - pad + 1) / slots / 1000
                }
                if rate >= 8 { break }
            }
            position += 1
        }
        if rate < 8 || (header.layer == 3 && rate > 640) { return false }
        self.freeRate = rate * 1000
        return true
    }

    // MARK: - Frame decoding (the parts that decide acceptance)

    private mutating func decodeFrame() -> Bool {
        self.ancillary = []
        self.ancillaryBitLength = 0
        if self.header.layer == 3 { return self.decodeLayer3() }
        return self.decodeLayer2()
    }

    // Layer II tables (ISO/IEC 11172-3 B.2a–d, 13818-3 B.1): subband limit and per-subband allocation class.
    private static let layer2Tables: [(limit: Int, classes: [Int])] = [
        (27, [7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0]),
        (30, [7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0]),
        (8, [5, 5, 2, 2, 2, 2, 2, 2]),
        (12, [5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]),
        (30, [4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),
    ]
    /// Per allocation class: allocation field width and quantisation row.
    private static let allocationClasses: [(bits: Int, row: Int)] = [
        (2, 0), (2, 3), (3, 3), (3, 1), (4, 2), (4, 3), (4, 4), (4, 5),
    ]
    private static let quantisationRows: [[Int]] = [
        [0, 1, 16], [0, 1, 2, 3, 4, 5, 16], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
        [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16],
        [0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    ]
    /// Bits one sample triple takes in each quantisation class (grouped classes 0, 1, 3 code three in one).
    private static let tripleBits = [5, 7, 9, 10, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48]

    /// Layer II: walks allocations, scale factors and samples; fails (like Debian's patched libmad) when
    /// they run past the end of the frame, or for single-channel mode above 192 kbit/s.
    private mutating func decodeLayer2() -> Bool {
        guard let next = self.nextFrame else { return false }
        let header = self.header
        let channels = header.channels
        let table: Int
        if header.lsf {
            table = 4
        } else if header.freeFormat {
            table = header.sampleRate == 48000 ? 0 : 1
        } else {
            var perChannel = header.bitRate
            if channels == 2 {
                perChannel /= 2
            } else if perChannel > 192_000 {
                self.error = .frame
                return false
            }
            if perChannel <= 48000 {
                table = header.sampleRate == 32000 ? 3 : 2
            } else if perChannel <= 80000 {
                table = 0
            } else {
                table = header.sampleRate == 48000 ? 0 : 1
            }
        }
        let (limit, classes) = Self.layer2Tables[table]
        let bound = min(header.modeBits == 1 ? 4 + header.modeExtension * 4 : 32, limit)
        let start = self.thisFrame + 4 + (header.protection ? 2 : 0)
        var bits = BitReader(bytes: self.buffer, bitOffset: start * 8, bitLength: max(0, next - start) * 8)
        var allocation = [[Int]](repeating: [Int](repeating: 0, count: 32), count: 2)
        func lost() -> Bool {
            self.inSync = false
            self.error = .lostSync
            return false
        }
        for band in 0..<limit {
            let width = Self.allocationClasses[classes[band]].bits
            if band < bound {
                for channel in 0..<channels {
                    guard bits.remaining >= width else { return lost() }
                    allocation[channel][band] = Int(bits.read(width))
                }
            } else {
                guard bits.remaining >= width else { return lost() }
                let value = Int(bits.read(width))
                allocation[0][band] = value
                allocation[1][band] = value
            }
        }
        var selection = [[Int]](repeating: [Int](repeating: 0, count: 32), count: 2)
        for band in 0..<limit {
            for channel in 0..<channels where allocation[channel][band] != 0 {
                guard bits.remaining >= 2 else { return lost() }
                selection[channel][band] = Int(bits.read(2))
            }
        }
        for band in 0..<limit {
            for channel in 0..<channels where allocation[channel][band] != 0 {
                let count = selection[channel][band] == 0 ? 3 : (selection[channel][band] == 2 ? 1 : 2)
                for _ in 0..<count {
                    guard bits.remaining >= 6 else { return lost() }
                    _ = bits.read(6)
                }
            }
        }
        func skipTriple(_ band: Int, _ index: Int) -> Bool {
            let quantClass = Self.quantisationRows[Self.allocationClasses[classes[band]].row][index - 1]
            let width = Self.tripleBits[quantClass]
            guard bits.remaining >= width else { return false }
            bits.skip(width)
            return true
        }
        for _ in 0..<12 {
            for band in 0..<bound {
                for channel in 0..<channels where allocation[channel][band] != 0 {
                    guard skipTriple(band, allocation[channel][band]) else { return lost() }
                }
            }
            for band in bound..<max(bound, limit) where allocation[0][band] != 0 {
                guard skipTriple(band, allocation[0][band]) else { return lost() }
            }
        }
        self.ancillary = self.buffer
        self.ancillaryBitOffset = bits.position
        self.ancillaryBitLength = bits.remaining
        return true
    }

    private mutating func decodeLayer3() -> Bool {
        guard let next = self.nextFrame else { return false }
        let header = self.header
        let channels = header.channels
        let sideInfoLength = header.lsf ? (channels == 1 ? 9 : 17) : (channels == 1 ? 17 : 32)
        let sideInfoStart = self.thisFrame + 4 + (header.protection ? 2 : 0)
        if next - sideInfoStart < sideInfoLength {
            self.reservoirLength = 0
            self.error = .frame
            return false
        }
        var bits = BitReader(bytes: self.buffer, bitOffset: sideInfoStart * 8, bitLength: sideInfoLength * 8)
        var failed = false
        let mainDataBegin = Int(bits.read(header.lsf ? 8 : 9))
        _ = bits.read(header.lsf ? (channels == 1 ? 1 : 2) : (channels == 1 ? 5 : 3))
        var scfsi = [UInt32](repeating: 0, count: 2)
        let granules = header.lsf ? 1 : 2
        if !header.lsf {
            for channel in 0..<channels { scfsi[channel] = bits.read(4) }
        }
        var dataBitLength = 0
        for _ in 0..<granules {
            for channel in 0..<channels {
                let part23 = Int(bits.read(12))
                let bigValues = bits.read(9)
                _ = bits.read(8)
                _ = bits.read(header.lsf ? 9 : 4)
                dataBitLength += part23
                if bigValues > 288 { failed = true }
                if bits.read(1) == 1 {
                    let blockType = bits.read(2)
                    if blockType == 0 { failed = true }
                    if !header.lsf && blockType == 2 && scfsi[channel] != 0 { failed = true }
                    _ = bits.read(1)
                    _ = bits.read(10)
                    _ = bits.read(9)
                } else {
                    _ = bits.read(15)
                    _ = bits.read(7)
                }
                _ = bits.read(header.lsf ? 2 : 3)
            }
        }
        // The next frame's main_data_begin says how much of this frame belongs to it.
        var nextMainDataBegin = 0
        if (self.bufferLength - next) * 8 >= 57 {
            let word =
                UInt32(self.buffer[next]) << 24 | UInt32(self.buffer[next + 1]) << 16
                | UInt32(self.buffer[next + 2]) << 8 | UInt32(self.buffer[next + 3])
            if word & 0xFFE6_0000 == 0xFFE2_0000 {
                var peek = BitReader(
                    bytes: self.buffer, bitOffset: (next + 4) * 8, bitLength: (self.bufferLength - next - 4) * 8)
                if word & 0x0001_0000 == 0 { _ = peek.read(16) }
                nextMainDataBegin = Int(peek.read(word & 0x0008_0000 != 0 ? 9 : 8))
            }
        }
        let mainStart = sideInfoStart + sideInfoLength
        let frameSpace = next - mainStart
        if nextMainDataBegin > mainDataBegin + frameSpace { nextMainDataBegin = 0 }
        let mainDataLength = mainDataBegin + frameSpace - nextMainDataBegin
        if mainDataLength + Self.guardSize > Self.mainDataCapacity {
            self.inSync = false
            self.error = .lostSync
            return false
        }
        var frameUsed = 0
        var mainData: [UInt8]?
        if mainDataBegin == 0 {
            self.reservoirLength = 0
            frameUsed = mainDataLength
            if !failed { mainData = Array(self.buffer[mainStart..<(mainStart + mainDataLength)]) }
        } else if mainDataBegin > self.reservoirLength {
            failed = true
        } else {
            let kept = Array(self.reservoir[(self.reservoirLength - mainDataBegin)..<self.reservoirLength])
            for (index, byte) in kept.enumerated() { self.reservoir[index] = byte }
            self.reservoirLength = mainDataBegin
            if mainDataLength > mainDataBegin {
                frameUsed = mainDataLength - mainDataBegin
                for index in 0..<frameUsed {
                    self.reservoir[self.reservoirLength + index] = self.buffer[mainStart + index]
                }
                self.reservoirLength += frameUsed
            }
            if !failed { mainData = Array(self.reservoir[0..<self.reservoirLength]) }
        }
        let frameFree = frameSpace - frameUsed
        if let mainData {
            self.ancillary = mainData
            self.ancillaryBitOffset = dataBitLength
            self.ancillaryBitLength = mainDataLength * 8 - dataBitLength
        }
        // Keep up to 511 bytes for the next frame's bit reservoir.
        if frameFree >= nextMainDataBegin {
            for index in 0..<nextMainDataBegin { self.reservoir[index] = self.buffer[next - nextMainDataBegin + index] }
            self.reservoirLength = nextMainDataBegin
        } else {
            if mainDataLength < mainDataBegin {
                var extra = mainDataBegin - mainDataLength
                if extra + frameFree > nextMainDataBegin { extra = nextMainDataBegin - frameFree }
                if extra < self.reservoirLength {
                    let tail = Array(self.reservoir[(self.reservoirLength - extra)..<self.reservoirLength])
                    for (index, byte) in tail.enumerated() { self.reservoir[index] = byte }
                    self.reservoirLength = extra
                }
            } else {
                self.reservoirLength = 0
            }
            for index in 0..<frameFree {
                self.reservoir[self.reservoirLength + index] = self.buffer[next - frameFree + index]
            }
            self.reservoirLength += frameFree
        }
        if failed { self.error = .frame }
        return !failed
    }

    // MARK: - Xing/Info header (the plugin's parse_xing)

    /// The Xing flags and frame count, when the first frame's ancillary data holds a header the plugin accepts,
    /// with the reader and bits left after it: the plugin then looks for a LAME tag there.
    private func parseXing() -> (flags: UInt32, frames: UInt32, bits: BitReader, bitLength: Int)? {
        var bitLength = self.ancillaryBitLength
        let initial = bitLength
        var bits = BitReader(
            bytes: self.ancillary, bitOffset: self.ancillaryBitOffset, bitLength: max(0, bitLength))
        if bitLength < 16 { return nil }
        let magic = bits.read(16)
        bitLength -= 16
        let xi: UInt32 = 0x5869, ng: UInt32 = 0x6E67, infoIn: UInt32 = 0x496E, fo: UInt32 = 0x666F
        if magic == xi {
            if bitLength < 16 || bits.read(16) != ng { return nil }
            bitLength -= 16
        } else if magic == infoIn {
            if bitLength < 16 || bits.read(16) != fo { return nil }
            bitLength -= 16
        } else if magic != ng && magic != fo {
            return nil
        }
        if bitLength < 32 { return nil }
        let flags = bits.read(32)
        bitLength -= 32
        var frames: UInt32 = 0
        if flags & 1 != 0 {
            if bitLength < 32 { return nil }
            frames = bits.read(32)
            bitLength -= 32
        }
        if flags & 2 != 0 {
            if bitLength < 32 { return nil }
            bits.skip(32)
            bitLength -= 32
        }
        if flags & 4 != 0 {
            if bitLength < 800 { return nil }
            bits.skip(800)
            bitLength -= 800
        }
        if flags & 8 != 0 {
            if bitLength < 32 { return nil }
            bits.skip(32)
            bitLength -= 32
        }
        // The LAME tag is looked for no earlier than 120 bytes into the ancillary data.
        let rest = 960 - (initial - bitLength)
        if rest < 0 { return nil }
        bits.skip(rest)
        return (flags, frames, bits, bitLength - rest)
    }

    // MARK: - LAME tag (the plugin's parse_lame)

    /// The ReplayGain the plugin submits from the LAME tag at `bits`, if any.
    ///
    /// As `mpd` 0.23's mad plugin: only a "radio" (track) gain set by someone and above 0 dB is used, 6 dB
    /// higher for encoders older than LAME 3.95 (their reference level was 83 dB). The album gain is never
    /// read. The peak is what the plugin computes: the tag's 32 bits shifted left by 5 and cut to a signed
    /// 32-bit integer, taken as a linear peak. LAME writes 0 there unless asked to find the peak, so the
    /// gain is then not limited; any other value limits the gain to the reciprocal of that large number,
    /// exactly as `mpd` plays such files.
    static func parseLame(_ bits: inout BitReader, bitLength: Int) -> ReplayGainInfo? {
        guard bitLength >= 288 else { return nil }
        var encoder: [UInt8] = []
        for _ in 0..<9 { encoder.append(UInt8(bits.read(8))) }
        guard encoder.starts(with: Array("LAME".utf8)), let version = Self.lameVersion(encoder.dropFirst(4))
        else { return nil }
        let adjustment = version.major < 3 || (version.major == 3 && version.minor < 95) ? 6 : 0
        bits.skip(16)
        let peakBits = UInt64(bits.read(32))
        let peak = Float(Int32(truncatingIfNeeded: peakBits << 5))
        let name = bits.read(3)
        let originator = bits.read(3)
        let negative = bits.read(1) == 1
        let tenths = Int(bits.read(9))
        guard tenths != 0, name == 1, originator != 0 else { return nil }
        let gain = Float(negative ? -tenths : tenths) / 10 + Float(adjustment)
        guard gain > 0 else { return nil }
        var info = ReplayGainInfo()
        info.trackGain = Double(gain)
        info.trackPeak = Double(peak)
        return info
    }

    /// `major.minor` as `sscanf("%u.%u")` reads it from the bytes after "LAME" (up to a NUL).
    static func lameVersion(_ bytes: ArraySlice<UInt8>) -> (major: UInt32, minor: UInt32)? {
        var rest = bytes.prefix { $0 != 0 }[...]
        func number() -> UInt32? {
            while let first = rest.first, first == 0x20 || (0x09...0x0D).contains(first) { rest.removeFirst() }
            if let first = rest.first, first == 0x2B { rest.removeFirst() }
            let digits = rest.prefix { (0x30...0x39).contains($0) }
            guard !digits.isEmpty else { return nil }
            rest.removeFirst(digits.count)
            var value: UInt32 = 0
            for digit in digits { value = value &* 10 &+ UInt32(digit - 0x30) }
            return value
        }
        guard let major = number(), rest.first == 0x2E else { return nil }
        rest.removeFirst()
        guard let minor = number() else { return nil }
        return (major, minor)
    }
}

/// Big-endian bit reads from a byte array; reads past the end give zero bits.
struct BitReader {
    private let bytes: [UInt8]
    /// The next bit to read.
    private(set) var position: Int
    private let end: Int

    /// Bits left before the end.
    var remaining: Int { max(0, self.end - self.position) }

    mutating func skip(_ count: Int) { self.position += count }

    init(bytes: [UInt8], bitOffset: Int, bitLength: Int) {
        self.bytes = bytes
        self.position = bitOffset
        self.end = min(bitOffset + bitLength, bytes.count * 8)
    }

    mutating func read(_ count: Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<count {
            var bit: UInt32 = 0
            if self.position < self.end {
                bit = UInt32(self.bytes[self.position >> 3] >> (7 - UInt8(self.position & 7))) & 1
            }
            value = value << 1 | bit
            self.position += 1
        }
        return value
    }
}
