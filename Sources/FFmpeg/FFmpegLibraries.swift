// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import DynamicLibrary
import Glibc

/// The file names `dlopen` loads FFmpeg's libraries by: Debian's sonames, from the major versions of the headers
/// the module was compiled with (`libavformat.so.59` for `LIBAVFORMAT_VERSION_MAJOR` 59), so the structures the
/// wrapper reads have the layout of the libraries it loads.
public struct FFmpegSonames: Sendable, Hashable {
    /// libavutil's.
    public var avutil: String
    /// libavcodec's.
    public var avcodec: String
    /// libavformat's.
    public var avformat: String

    /// Names of the three libraries (any name or path `dlopen` takes).
    public init(avutil: String, avcodec: String, avformat: String) {
        self.avutil = avutil
        self.avcodec = avcodec
        self.avformat = avformat
    }

    /// The sonames matching the headers.
    public static let headers = FFmpegSonames(
        avutil: "libavutil.so.\(LIBAVUTIL_VERSION_MAJOR)", avcodec: "libavcodec.so.\(LIBAVCODEC_VERSION_MAJOR)",
        avformat: "libavformat.so.\(LIBAVFORMAT_VERSION_MAJOR)")
}

/// FFmpeg's libraries, loaded on first use and closed after a database update.
///
/// The `fermata` binary does not link libavformat, libavcodec and libavutil: mapping and relocating them and the
/// ~75 libraries they need (codecs, TLS, image libraries…) cost every server ~13 MiB of resident memory
/// at start-up, used only by the formats only FFmpeg reads. The first `acquire()` opens them (`dlopen`) and
/// resolves every function the wrapper calls into a table; each `FFmpegInput` holds one use from its creation to
/// its release (its decoder keeps the input). The server closes them (`dlclose`) only when a database update
/// has read every file and nothing uses them (`unloadIfIdle()`), not after each song: every load and close
/// loses memory the libraries' constructors allocate (LeakSanitizer on a C loop of `dlopen`/`dlclose` of the
/// three: 125,840 bytes in 10 cycles, and the c64opl fuzz target's leak report with a 2 s idle close), so a
/// close per idle moment would leak without bound while one per update costs ~13 KB. Process-wide set-up
/// (FFmpeg's logging silenced) is redone after every load.
///
/// When the libraries cannot be loaded (not installed, a missing function), every `acquire()` throws the same
/// error and the failure is reported once, on stderr: the ffmpeg plugin then declines every file, as if off.
///
/// Loading, counting and reporting are `DynamicLibraries`' (shared with the other libraries loaded on first use).
///
/// Thread-safe: the state is under a lock, taken per object opened or released (never per packet or frame).
public final class FFmpegLibraries: Sendable {
    /// The process's libraries: Debian's sonames, closed only by `unloadIfIdle()` (at the end of an update).
    public static let shared = FFmpegLibraries(sonames: .headers)

    /// The libraries' names.
    public let sonames: FFmpegSonames
    private let libraries: DynamicLibraries<fermata_ffmpeg_functions>

    /// Libraries loaded from `sonames` on first use, closed by `unloadIfIdle()`.
    ///
    /// - Parameter reportFailure: Told once why the libraries cannot be loaded (stderr by default).
    public init(sonames: FFmpegSonames, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.sonames = sonames
        self.libraries = DynamicLibraries(
            names: [sonames.avutil, sonames.avcodec, sonames.avformat], what: "the FFmpeg libraries",
            prefix: "ffmpeg: decoder plugin unavailable: ",
            fill: { table, handles in fermata_ffmpeg_resolve(table, handles[0], handles[1], handles[2]) },
            // Global state of FFmpeg's, gone with the libraries: set again on every load.
            configure: { functions in functions.av_log_set_level(AV_LOG_QUIET) },
            reportFailure: reportFailure)
    }

    /// Whether the libraries are loaded now.
    public var isLoaded: Bool { self.libraries.isLoaded }
    /// How many objects use the libraries now.
    public var users: Int { self.libraries.users }
    /// How many times the libraries were loaded, and closed.
    public var loadCount: Int { self.libraries.loadCount }
    public var unloadCount: Int { self.libraries.unloadCount }

    /// One more use of the libraries, loading them first if they are not loaded; pair it with `release()`.
    ///
    /// Locks; loading (first use, or after an unload) opens and relocates the libraries (tens of milliseconds).
    /// - Returns: The resolved functions, valid until the matching `release()`.
    /// - Throws: `FFmpegError` (function `dlopen` or `dlsym`) when the libraries cannot be loaded.
    func acquire() throws(FFmpegError) -> fermata_ffmpeg_functions {
        do {
            return try self.libraries.acquire()
        } catch {
            throw FFmpegError(function: error.function, message: error.message)
        }
    }

    /// Ends a use `acquire()` began; the libraries stay loaded until `unloadIfIdle()`.
    ///
    /// Locks; any thread.
    func release() { self.libraries.release() }

    /// Closes the libraries if nothing uses them. Any thread.
    ///
    /// - Returns: Whether they were closed now.
    @discardableResult
    public func unloadIfIdle() -> Bool { self.libraries.unloadIfIdle() }
}

/// FFmpeg's constants and messages.
enum FFmpegConstants {
    /// `AVERROR_EOF`.
    static let endOfFile = fermata_averror_eof()
    /// `AVERROR(EAGAIN)`.
    static let tryAgain = fermata_averror_eagain()
    /// `AVERROR(EIO)`.
    static let ioError = fermata_averror_eio()
    /// `AV_NOPTS_VALUE`: no time stamp.
    static let noTimestamp = fermata_av_nopts_value()

    /// FFmpeg's text for a result code (`av_strerror`) while the libraries are loaded; any thread.
    static func message(_ code: Int32, _ ffmpeg: fermata_ffmpeg_functions) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress, ffmpeg.av_strerror(code, base, 256) == 0 else {
                return "error \(code)"
            }
            return String(cString: base)
        }
    }
}
