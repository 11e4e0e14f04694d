// SPDX-License-Identifier: GPL-3.0-or-later

import TestTools

/// Test files made with Debian's `ffmpeg` command (bit-exact, no metadata of its own), once per process.
enum FFmpegSample {
    static let made = MadeFiles("ffmpeg")

    /// A sweep (one pitch per channel) encoded by `ffmpeg` with `codec` arguments such as `["-c:a", "alac"]`,
    /// with `-metadata` pairs and, when `cover` names a picture codec (`png`, `mjpeg`), a cover picture
    /// attached; made once.
    static func file(
        _ name: String, rate: Int = 44100, channels: Int = 2, seconds: String = "1", codec: [String],
        metadata: [(String, String)] = [], cover: String? = nil
    ) throws -> String {
        let picture = try cover.map { cover in
            try self.made.file("cover-\(cover)." + (cover == "png" ? "png" : "jpg")) { picture in
                try runTool(
                    "/usr/bin/ffmpeg",
                    [
                        "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=red:s=8x8", "-frames:v", "1",
                        "-c:v", cover, "-f", "image2", picture,
                    ])
            }
        }
        return try self.made.file(name) { path in
            let sweep = "0.5*sin(2*PI*(200+900*t)*t)|0.4*sin(2*PI*(300+500*t)*t)"
            var arguments = [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=\(sweep):s=\(rate):d=\(seconds)",
            ]
            if let picture {
                arguments += [
                    "-i", picture, "-map", "0", "-map", "1", "-c:v", "copy", "-disposition:v", "attached_pic",
                ]
            }
            arguments += ["-ac", "\(channels)"] + codec
            arguments += ["-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"]
            for (key, value) in metadata { arguments += ["-metadata", "\(key)=\(value)"] }
            try runTool("/usr/bin/ffmpeg", arguments + [path])
        }
    }

    /// `ffmpeg`'s own decode of a file to raw interleaved PCM (`format`: `s16le`, `s32le`, `f32le`).
    static func decode(_ path: String, format: String) throws -> [UInt8] {
        try runTool("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", format, "-"])
    }

    /// The bytes of a file.
    static func bytes(_ path: String) throws -> [UInt8] { try fileBytes(path) }
}
