// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg

/// Process-wide FFmpeg set-up, done once before the first use: FFmpeg's logging to stderr is silenced
/// (`mpd` routes FFmpeg's messages to its own log; Fermata reports failures through thrown errors).
enum FFmpegLibrary {
    /// Runs the set-up; Swift runs this initialiser once, thread-safely.
    private static let setUp: Void = av_log_set_level(AV_LOG_QUIET)

    /// Makes sure the set-up ran; any thread.
    static func ensureInitialized() { Self.setUp }

    /// `AVERROR_EOF`.
    static let endOfFile = fermata_averror_eof()
    /// `AVERROR(EAGAIN)`.
    static let tryAgain = fermata_averror_eagain()
    /// `AVERROR(EIO)`.
    static let ioError = fermata_averror_eio()
    /// `AV_NOPTS_VALUE`: no time stamp.
    static let noTimestamp = fermata_av_nopts_value()

    /// FFmpeg's text for a result code (`av_strerror`); any thread.
    static func message(_ code: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress, av_strerror(code, base, 256) == 0 else { return "error \(code)" }
            return String(cString: base)
        }
    }
}
