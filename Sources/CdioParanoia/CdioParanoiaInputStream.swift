// SPDX-License-Identifier: GPL-3.0-or-later

import CCdioParanoia
import Glibc
import Input
import Model

/// A track (or the whole disc) of an audio CD as an input stream (`mpd`'s cdio_paranoia input plugin):
/// `cdda://[DEVICE][/TRACK]`, read sector by sector through libcdio-paranoia, seekable, with the track's size
/// and the MIME type (`audio/x-mpd-cdda-pcm`, or `…-reverse` for a big-endian drive) that the `pcm` decoder
/// plugin plays. DEVICE is a drive (`/dev/sr0`) or anything libcdio opens as one, such as a `.cue` image; without
/// it, the first drive libcdio finds with an audio CD in it.
///
/// Opened, read and moved on the decoder thread, which waits on the drive as `mpd`'s does. Not `Sendable`.
public final class CdioParanoiaInputStream: InputStream {
    /// The URL it was opened with.
    public let uri: String
    /// The track's (or disc's) bytes.
    public let size: UInt64?
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// `audio/x-mpd-cdda-pcm` or `audio/x-mpd-cdda-pcm-reverse`.
    public let mimeType: String?
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0

    private let cdio: OpaquePointer
    private let drive: UnsafeMutablePointer<cdrom_drive_t>
    private let paranoia: OpaquePointer
    private let firstSector: Int32
    /// The sector last read, relative to ``firstSector``, and its bytes.
    private var bufferedSector: Int64 = -1
    private let sector: UnsafeMutableRawPointer

    /// Bytes per CD sector (`CDIO_CD_FRAMESIZE_RAW`).
    public static let sectorSize = 2352

    /// Whether this plugin opens `url`: the `cdda://` scheme, in any case.
    public static func canOpen(_ url: String) -> Bool { URIScheme.hasPrefixIgnoringCase(url.utf8, "cdda://") }

    /// Opens the disc and seeks to the track.
    ///
    /// - Throws: `InputError.plugin` with `mpd`'s words (`Malformed track number`, `Failed to open CD drive`,
    ///   `Unable to identify audio CD disc.`, `Unable find or access a CD-ROM drive with an audio CD in it.`),
    ///   or `Invalid track number` for a track the disc does not have.
    public init(url: String, settings: CdioParanoiaSettings = CdioParanoiaSettings()) throws(InputError) {
        self.uri = url
        let location: (device: String, track: Int?)
        do {
            location = try Self.parse(url)
        } catch {
            throw .plugin(message: error.message, uri: url)
        }
        guard let device = location.device.isEmpty ? Self.detectDevice() : location.device else {
            throw .plugin(message: "Unable find or access a CD-ROM drive with an audio CD in it.", uri: url)
        }
        guard let cdio = cdio_open(device, DRIVER_UNKNOWN) else {
            throw .plugin(message: "Failed to open CD drive", uri: url)
        }
        guard let drive = cdio_cddap_identify_cdio(cdio, Int32(CDDA_MESSAGE_FORGETIT.rawValue), nil) else {
            cdio_destroy(cdio)
            throw .plugin(message: "Unable to identify audio CD disc.", uri: url)
        }
        cdio_cddap_verbose_set(
            drive, Int32(CDDA_MESSAGE_FORGETIT.rawValue), Int32(CDDA_MESSAGE_FORGETIT.rawValue))
        if settings.speed > 0 { _ = cdio_cddap_speed_set(drive, Int32(clamping: settings.speed)) }
        func fail(_ message: String) -> InputError {
            cdio_cddap_close_no_free_cdio(drive)
            cdio_destroy(cdio)
            return .plugin(message: message, uri: url)
        }
        guard cdio_cddap_open(drive) == 0 else { throw fail("Unable to open disc.") }
        let reverse: Bool
        switch data_bigendianp(drive) {
        case -1: reverse = settings.defaultReverseEndian
        case 0: reverse = false
        case 1: reverse = true
        case let other: throw fail("Drive returns unknown data type \(other)")
        }
        let first: Int32
        let last: Int32
        if let track = location.track {
            let number = track_t(truncatingIfNeeded: track)
            first = cdio_get_track_lsn(cdio, number)
            last = cdio_get_track_last_lsn(cdio, number)
        } else {
            first = 0
            last = cdio_get_disc_last_lsn(cdio)
        }
        // mpd goes on with libcdio's CDIO_INVALID_LSN here (and hangs); Fermata says why it cannot.
        guard first >= 0, last >= first else { throw fail("Invalid track number") }
        guard let paranoia = cdio_paranoia_init(drive) else { throw fail("Failed to open disc") }
        cdio_paranoia_modeset(paranoia, settings.modeFlags)
        cdio_paranoia_seek(paranoia, first, SEEK_SET)
        self.cdio = cdio
        self.drive = drive
        self.paranoia = paranoia
        self.firstSector = first
        self.size = UInt64(last - first + 1) * UInt64(Self.sectorSize)
        self.mimeType = reverse ? "audio/x-mpd-cdda-pcm-reverse" : "audio/x-mpd-cdda-pcm"
        self.sector = .allocate(byteCount: Self.sectorSize, alignment: 2)
    }

    deinit {
        cdio_paranoia_free(self.paranoia)
        cdio_cddap_close_no_free_cdio(self.drive)
        cdio_destroy(self.cdio)
        self.sector.deallocate()
    }

    /// The device and track of a `cdda://` URL, as `mpd` splits them: the track after the last `/` (none when
    /// empty: the whole disc), the device before it (up to 63 bytes); no `/`: all of it is the device.
    ///
    /// - Throws: `Malformed track number` when the text after the last `/` is not a number.
    static func parse(_ url: String) throws(CdioParanoiaError) -> (device: String, track: Int?) {
        let rest = Array(url.utf8.dropFirst("cdda://".utf8.count))
        let maximumDevice = 63
        guard let slash = rest.lastIndex(of: UInt8(ascii: "/")) else {
            return (String(decoding: rest.prefix(maximumDevice), as: UTF8.self), nil)
        }
        let device = String(decoding: rest[..<slash].prefix(maximumDevice), as: UTF8.self)
        let text = rest[(slash + 1)...]
        if text.isEmpty { return (device, nil) }
        // strtoul: white space and a sign first; the rest must be digits.
        var digits = text.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            digits = digits.dropFirst()
        }
        // Nothing converted (`/+`, `/ `) leaves strtoul's end at the text's start, which is not its end.
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw CdioParanoiaError(message: "Malformed track number")
        }
        var value = 0
        for digit in digits { value = min(Int(Int32.max), value &* 10 &+ Int(digit - 0x30)) }
        return (device, negative ? -value : value)
    }

    /// The first drive libcdio finds with an audio CD in it.
    private static func detectDevice() -> String? {
        guard let devices = cdio_get_devices_with_cap(nil, cdio_fs_anal_t(CDIO_FS_AUDIO.rawValue), 0) else {
            return nil
        }
        defer { cdio_free_device_list(devices) }
        return devices[0].map { String(cString: $0) }
    }

    /// Reads from the sector at `offset` (through libcdio-paranoia, unless it is the one read last).
    ///
    /// - Returns: 0 at the end of the track.
    /// - Throws: `InputError.plugin("Read from audio CD failed")`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard let size = self.size, self.offset < size, let target = buffer.baseAddress else { return 0 }
        let sectorSize = UInt64(Self.sectorSize)
        let index = Int64(self.offset / sectorSize)
        let skip = Int(self.offset % sectorSize)
        if index != self.bufferedSector {
            guard let data = cdio_paranoia_read(self.paranoia, nil) else {
                throw .plugin(message: "Read from audio CD failed", uri: self.uri)
            }
            self.sector.copyMemory(from: data, byteCount: Self.sectorSize)
            self.bufferedSector = index
        }
        let count = min(buffer.count, Self.sectorSize - skip)
        target.copyMemory(from: self.sector + skip, byteCount: count)
        self.offset += UInt64(count)
        return count
    }

    /// Moves to `offset` (at most the size): libcdio-paranoia seeks to its sector unless that is the one read
    /// last.
    ///
    /// - Throws: `InputError.notSeekable` past the end.
    public func seek(to offset: UInt64) throws(InputError) {
        guard let size = self.size, offset <= size else { throw .notSeekable(uri: self.uri) }
        if offset == self.offset { return }
        let index = Int64(offset / UInt64(Self.sectorSize))
        if index != self.bufferedSector {
            cdio_paranoia_seek(self.paranoia, self.firstSector + Int32(index), SEEK_SET)
            // The next read is the sector sought.
            self.bufferedSector = -1
        }
        self.offset = offset
    }
}

/// Why a `cdda://` URL could not be read.
struct CdioParanoiaError: Error, Equatable {
    var message: String
}
