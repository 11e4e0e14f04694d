// SPDX-License-Identifier: GPL-3.0-or-later

import COgg
import Input

/// The packets of a (possibly chained) Ogg physical stream for a decoder, as `mpd`'s `OggVisitor` walks
/// them: pages in file order, a logical stream switch at every new serial number, and bisection seeking by
/// granule position (`OggDecoder::SeekGranulePos`).
///
/// Confined to the decoding thread. `next()` and the seeking methods do not allocate: the page, packet and
/// sync buffers exist from creation.
final class OggDemuxer {
    /// What `next()` found.
    enum Event {
        /// A packet, in `packet`.
        case packet
        /// A page of another serial number began a new logical stream (the previous one ended).
        case newSerial
        /// The input ended (or stopped being Ogg).
        case end
    }

    let sync: OggSync
    let stream: OggStream
    /// The current packet (valid until the next call; unsafe: freed in `deinit`).
    let packet: UnsafeMutablePointer<ogg_packet>
    /// Scratch page (unsafe: freed in `deinit`).
    private let page: UnsafeMutablePointer<ogg_page>

    var input: any InputStream { self.sync.input }

    init(input: any InputStream) {
        self.sync = OggSync(input: input)
        self.stream = OggStream(serial: 0)
        self.packet = .allocate(capacity: 1)
        self.packet.initialize(to: ogg_packet())
        self.page = .allocate(capacity: 1)
        self.page.initialize(to: ogg_page())
    }

    deinit {
        self.packet.deallocate()
        self.page.deallocate()
    }

    /// The next packet, reading pages as needed (`OggVisitor::Visit`). A gap in the packet sequence is
    /// passed over.
    func next() -> Event {
        while true {
            if self.stream.packetOut(self.packet) == 1 { return .packet }
            guard self.sync.nextPage(self.page) else { return .end }
            let serial = self.page.pointee.serial
            if Int(serial) != self.stream.serial {
                self.stream.reinitialize(serial: serial)
                self.stream.pageIn(self.page)
                return .newSerial
            }
            self.stream.pageIn(self.page)
        }
    }

    // MARK: - Seeking

    /// Moves the input to `offset` and feeds the first page found after it (`OggVisitor::PostSeek`).
    ///
    /// - Throws: `OggError.input` when the input cannot move there.
    func seekByte(_ offset: UInt64) throws(OggError) {
        do {
            try self.input.seek(to: offset)
        } catch {
            throw .input(error)
        }
        self.sync.reset(offset: offset)
        self.stream.reset()
        if self.sync.seekPage(self.page) { self.stream.pageIn(self.page) }
    }

    /// The granule position of the first packet that has one among those already fed
    /// (`OggVisitor::ReadGranulepos`).
    private func readGranulePosition() -> Int64? {
        while self.stream.packetOut(self.packet) == 1 {
            if self.packet.pointee.granulepos >= 0 { return self.packet.pointee.granulepos }
        }
        return nil
    }

    /// Bisection by interpolation towards the page holding `target` (`mpd`'s `SeekGranulePos`: stop within
    /// 1/3 s before or 1/10 s after, at 44.1 kHz units), then back to the start of the page found, so
    /// `next()` continues there.
    ///
    /// - Returns: the granule position of the page the demuxer now stands at, or `nil` when none was found
    ///   (the position is then undefined).
    /// - Throws: `OggError.input` when the input cannot seek.
    func seek(granule target: Int64, endGranule: Int64) throws(OggError) -> Int64? {
        let marginBefore: Int64 = 44100 / 3
        let marginAfter: Int64 = 44100 / 10
        guard let size = self.input.size, endGranule > 0 else { return nil }
        var minOffset: UInt64 = 0
        var maxOffset = size
        var minGranule: Int64 = 0
        var maxGranule = endGranule
        var found: Int64
        while true {
            let deltaGranule = maxGranule - minGranule
            let relative = max(0, target - minGranule)
            guard deltaGranule > 0 else { return nil }
            let (high, low) = UInt64(relative).multipliedFullWidth(by: maxOffset - minOffset)
            let step = UInt64(deltaGranule) > high ? UInt64(deltaGranule).dividingFullWidth((high, low)).quotient : 0
            try self.seekByte(minOffset + step)
            guard let granule = self.readGranulePosition() else { return nil }
            found = granule
            if granule > target + marginAfter {
                if granule > maxGranule { return nil }
                if granule == maxGranule { break }
                maxGranule = granule
                maxOffset = self.sync.startOffset
            } else if granule + marginBefore < target {
                if granule < minGranule { return nil }
                if granule == minGranule { break }
                minGranule = granule
                minOffset = self.sync.startOffset
            } else {
                break
            }
        }
        try self.seekByte(self.sync.startOffset)
        return found
    }

    /// Back to the very start of the input.
    ///
    /// - Throws: `OggError.input` when the input cannot seek.
    func rewind() throws(OggError) {
        do {
            try self.input.seek(to: 0)
        } catch {
            throw .input(error)
        }
        self.sync.reset(offset: 0)
        self.stream.reset()
        self.stream.reinitialize(serial: 0)
    }

    // MARK: - End of stream

    /// The granule position of the end-of-stream packet of the logical stream `serial`, as `mpd`'s
    /// `OggDecoder::LoadEndGranulePos` finds it (inputs that seek cheaply only, as `mpd`: not a remote stream;
    /// the last 64 KiB, or the rest when less remains), with the input's offset restored afterwards. Allocates
    /// (at open).
    func endGranule(serial: Int) -> Int64? {
        guard self.input.isCheapToSeek else { return nil }
        let saved = self.input.offset
        defer { try? self.input.seek(to: saved) }
        let scratch = OggSync(input: self.input)
        let stream = OggStream(serial: Int32(truncatingIfNeeded: serial))
        return Self.findEndGranule(sync: scratch, stream: stream, synced: false)
    }

    /// `mpd`'s `OggSeekFindEOS`: the end-of-stream packet of `stream`'s serial number within the last 64 KiB
    /// of the input (or from here when less remains; `synced` says whether `sync` stands at a page start).
    static func findEndGranule(sync: OggSync, stream: OggStream, synced: Bool) -> Int64? {
        let input = sync.input
        guard let size = input.size else { return nil }
        let page = UnsafeMutablePointer<ogg_page>.allocate(capacity: 1)
        page.initialize(to: ogg_page())
        defer { page.deallocate() }
        if size &- min(size, input.offset) < 65536 {
            if !synced {
                guard sync.seekPage(page) else { return nil }
                stream.pageIn(page)
            }
        } else {
            // mpd seeks to the last 64 KiB only where seeking is cheap (not over HTTP).
            guard input.isCheapToSeek else { return nil }
            sync.reset(offset: sync.offset)
            stream.reset()
            do {
                try input.seek(to: size - 65536)
            } catch {
                return nil
            }
            guard sync.seekPage(page) else { return nil }
            stream.pageIn(page)
        }
        var packet = ogg_packet()
        while true {
            let result = stream.packetOut(&packet)
            if result == 0 {
                guard sync.nextPage(page) else { return nil }
                stream.pageIn(page)
            } else if result > 0, packet.e_o_s != 0 {
                return packet.granulepos
            }
        }
    }
}

/// A packet copied out of an Ogg stream, for headers read while scanning.
public struct OggPacket: Sendable, Hashable {
    /// The packet's bytes.
    public var bytes: [UInt8]
    /// Whether it begins a logical stream (`b_o_s`).
    public var isBeginning: Bool
    /// Whether it ends one (`e_o_s`).
    public var isEnd: Bool
    /// Its granule position (-1 when its page gives none for it).
    public var granulePosition: Int64

    init(_ packet: ogg_packet) {
        self.bytes = Array(UnsafeRawBufferPointer(start: packet.packet, count: packet.bytes))
        self.isBeginning = packet.b_o_s != 0
        self.isEnd = packet.e_o_s != 0
        self.granulePosition = packet.granulepos
    }
}

/// The first logical stream of an Ogg file, read as `mpd`'s scanners read it: the first page (which must
/// start the file), its packets, and the granule position of its end-of-stream packet.
///
/// Confined to one thread; allocates (for scanning, not playback).
public final class OggPacketReader {
    private let sync: OggSync
    private let stream: OggStream

    /// Reads the first page of `input` (from its current offset).
    ///
    /// - Throws: `OggError.malformed` when the input does not start with an Ogg page, `.input` when reading
    ///   failed.
    public init(input: any InputStream) throws(OggError) {
        self.sync = OggSync(input: input)
        var page = ogg_page()
        guard self.sync.nextPage(&page) else {
            if let error = self.sync.inputError { throw .input(error) }
            throw .malformed("not an Ogg stream")
        }
        self.stream = OggStream(serial: page.serial)
        self.stream.pageIn(&page)
    }

    /// The first stream's serial number.
    public var serial: Int { self.stream.serial }

    /// The next packet of the first stream (`mpd`'s `OggReadPacket`), or `nil` when the input ends first.
    public func nextPacket() -> OggPacket? {
        var packet = ogg_packet()
        var page = ogg_page()
        while true {
            if self.stream.packetOut(&packet) == 1 { return OggPacket(packet) }
            guard self.sync.nextPage(&page) else { return nil }
            self.stream.pageIn(&page)
        }
    }

    /// The granule position of the first stream's end-of-stream packet, searched from here when less than 64 KiB
    /// remain, else in the last 64 KiB where the input seeks cheaply (`mpd`'s `OggSeekFindEOS`), or `nil` when it
    /// is not found.
    public func endGranulePosition() -> Int64? {
        OggDemuxer.findEndGranule(sync: self.sync, stream: self.stream, synced: true)
    }
}
