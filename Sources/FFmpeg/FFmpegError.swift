// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg

/// A failed FFmpeg call: which function, its error code and FFmpeg's message for it.
public struct FFmpegError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The FFmpeg function that failed (`avformat_open_input`, `avcodec_open2`…), or what was missing.
    public let function: String
    /// The (negative) `AVERROR` code, or 0 when the failure is not an FFmpeg result code.
    public let code: Int32
    /// FFmpeg's text for the code (`av_strerror`), or an explanation.
    public let message: String

    /// Creates an error from a result code, with FFmpeg's text for it (the libraries are loaded). Any thread.
    init(function: String, code: Int32, _ ffmpeg: fermata_ffmpeg_functions) {
        self.function = function
        self.code = code
        self.message = FFmpegConstants.message(code, ffmpeg)
    }

    /// Creates an error with an explanation of our own (no FFmpeg result code). Any thread.
    public init(function: String, message: String) {
        self.function = function
        self.code = 0
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }
}
