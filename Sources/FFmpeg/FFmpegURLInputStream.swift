// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import Glibc
import Input
import Synchronization

/// A URL read through libavformat's own protocols (`avio_open2`), as `mpd`'s ffmpeg input plugin reads the
/// schemes curl does not take: `hls+http://` (an HLS playlist's segments one after the other), `rtp://`,
/// `srtp://`, `mmsh://`, `mmst://`… Its MIME type is `audio/x-mpd-ffmpeg`, `mpd`'s way of handing such a stream
/// to the ffmpeg decoder plugin (avio says nothing about the content).
///
/// Confined to one thread at a time, as every ``InputStream``. A blocking open or read ends when `cancellation`
/// fires (libavformat's interrupt callback asks it).
public final class FFmpegURLInputStream: InputStream {
    /// The MIME type `mpd` gives these streams, which selects the ffmpeg decoder plugin.
    public static let mimeType = "audio/x-mpd-ffmpeg"

    public let uri: String
    public let size: UInt64?
    public let isSeekable: Bool
    public var mimeType: String? { Self.mimeType }
    public private(set) var offset: UInt64 = 0

    private let io: UnsafeMutablePointer<AVIOContext>
    private let ffmpeg: fermata_ffmpeg_functions
    private let libraries: FFmpegLibraries
    private let interrupt: FFmpegInterrupt
    private var ended = false

    /// Opens `url` for reading. Blocks until the protocol answered, failed or `cancellation` fired; any thread
    /// but the event loop's. Holds one use of `libraries` until `deinit`.
    ///
    /// - Throws: `InputError.plugin` with FFmpeg's text (`Connection refused`, `Server returned 404 Not Found`,
    ///   `Protocol not found`…), `.cancelled` when cancelled.
    public init(url: String, cancellation: InputCancellation, libraries: FFmpegLibraries = .shared) throws(InputError) {
        if cancellation.isCancelled { throw .cancelled(uri: url) }
        let ffmpeg: fermata_ffmpeg_functions
        do {
            ffmpeg = try libraries.acquire()
        } catch {
            throw .plugin(message: error.message, uri: url)
        }
        var opened = false
        defer { if !opened { libraries.release() } }
        let interrupt = FFmpegInterrupt(cancellation)
        var callback = interrupt.callback
        var context: UnsafeMutablePointer<AVIOContext>?
        let result = url.withCString { ffmpeg.avio_open2(&context, $0, AVIO_FLAG_READ, &callback, nil) }
        guard result >= 0, let context else {
            if cancellation.isCancelled { throw .cancelled(uri: url) }
            throw .plugin(message: FFmpegConstants.message(result, ffmpeg), uri: url)
        }
        self.uri = url
        self.io = context
        self.ffmpeg = ffmpeg
        self.libraries = libraries
        self.interrupt = interrupt
        self.isSeekable = context.pointee.seekable & AVIO_SEEKABLE_NORMAL != 0
        let size = ffmpeg.avio_size(context)
        self.size = size >= 0 ? UInt64(size) : nil
        opened = true
    }

    deinit {
        var context: UnsafeMutablePointer<AVIOContext>? = self.io
        _ = self.ffmpeg.avio_closep(&context)
        self.libraries.release()
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty, !self.ended, let base = buffer.baseAddress else { return 0 }
        let count = self.ffmpeg.avio_read(
            self.io, base.assumingMemoryBound(to: UInt8.self), Int32(clamping: buffer.count))
        if count == fermata_averror_eof() {
            self.ended = true
            return 0
        }
        guard count >= 0 else {
            if self.interrupt.isCancelled { throw .cancelled(uri: self.uri) }
            throw .plugin(message: FFmpegConstants.message(count, self.ffmpeg), uri: self.uri)
        }
        if count == 0 { self.ended = true }
        self.offset += UInt64(count)
        return Int(count)
    }

    public func seek(to offset: UInt64) throws(InputError) {
        guard self.isSeekable else { throw .notSeekable(uri: self.uri) }
        let result = self.ffmpeg.avio_seek(self.io, Int64(clamping: offset), SEEK_SET)
        guard result >= 0 else {
            throw .plugin(message: FFmpegConstants.message(Int32(clamping: result), self.ffmpeg), uri: self.uri)
        }
        self.offset = UInt64(result)
        self.ended = false
    }
}

extension FFmpegLibraries {
    /// libavformat's whitelisted protocols are all `mpd` 0.23 lets its ffmpeg input plugin open.
    private static let whitelist: Set<String> = [
        "ftp", "ftps", "gopher", "http", "https", "mmsh", "mmst", "rtmp", "rtmpe", "rtmps", "rtmpt", "rtmpte",
        "rtmpts", "rtp", "scp", "sftp", "smb", "srtp",
    ]

    /// The URI schemes `mpd`'s ffmpeg input plugin takes (`scheme://`), from the protocols this libavformat
    /// reads: the whitelisted ones, and `hls+http://` and `hls+https://` for its `hls` protocol. Loads the
    /// libraries if they are not (blocking: at start-up); empty when they cannot be loaded.
    public func inputSchemes() -> [String] {
        guard let ffmpeg = try? self.acquire() else { return [] }
        defer { self.release() }
        var schemes = Set<String>()
        var opaque: UnsafeMutableRawPointer?
        while let name = ffmpeg.avio_enum_protocols(&opaque, 0) {
            let protocolName = String(cString: name)
            if protocolName == "hls" {
                schemes.insert("hls+http://")
                schemes.insert("hls+https://")
            } else if Self.whitelist.contains(protocolName.lowercased()) {
                schemes.insert(protocolName + "://")
            }
        }
        return schemes.sorted()
    }

    /// The URI schemes `mpd`'s ffmpeg decoder plugin opens itself, without an input plugin (its `protocols`):
    /// `rtsp://` and `rtsps://` when this libavformat has the rtsp demuxer, `rtp://` when it has the rtp one. Loads
    /// the libraries if they are not (blocking: at start-up); empty when they cannot be loaded.
    public func decoderSchemes() -> [String] {
        guard let ffmpeg = try? self.acquire() else { return [] }
        defer { self.release() }
        var schemes = Set<String>()
        var opaque: UnsafeMutableRawPointer?
        while let format = ffmpeg.av_demuxer_iterate(&opaque) {
            guard let name = format.pointee.name else { continue }
            switch String(cString: name) {
            case "rtsp": schemes.formUnion(["rtsp://", "rtsps://"])
            case "rtp": schemes.insert("rtp://")
            default: break
            }
        }
        return schemes.sorted()
    }
}
