// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// Reads a whole stream into memory for libraries that load complete files (libgme, libopenmpt), with the
/// bounds `mpd`'s `mod_loadfile` applies: a stream of known size must be 1 byte to `limit`; one of unknown
/// size is read up to `unknownSizeLimit` (as in `mpd`, a longer one is cut there).
enum WholeStream {
    /// `mpd`'s `MOD_FILE_LIMIT`: 100 MiB.
    static let limit: UInt64 = 100 * 1024 * 1024
    /// `mpd`'s `MOD_PREALLOC_BLOCK`, its cap for streams of unknown size: 256 KiB.
    static let unknownSizeLimit = 256 * 1024

    /// The bytes from the stream's current offset to its end.
    ///
    /// - Throws: `FormatError.decoder` for an empty, too large or short file; `.input` on a read error.
    static func read(_ input: any InputStream) throws(FormatError) -> [UInt8] {
        do {
            if let size = input.size {
                let remaining = size - min(size, input.offset)
                guard remaining > 0 else { throw FormatError.decoder("\(input.uri): file is empty") }
                guard remaining <= Self.limit else { throw FormatError.decoder("\(input.uri): file too large") }
                guard let bytes = try input.readBytes(Int(remaining)) else {
                    throw FormatError.decoder("\(input.uri): file is shorter than its size")
                }
                return bytes
            }
            var bytes = [UInt8](repeating: 0, count: Self.unknownSizeLimit)
            let count = try bytes.withUnsafeMutableBytes { buffer throws(InputError) in
                try input.readFully(into: buffer)
            }
            guard count > 0 else { throw FormatError.decoder("\(input.uri): file is empty") }
            bytes.removeSubrange(count...)
            return bytes
        } catch let error as FormatError {
            throw error
        } catch let error as InputError {
            throw .input(error)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// The whole file at `path`, for a plugin's scan.
    ///
    /// - Throws: `FormatError.notRecognized` when the file cannot be opened or read within the bounds.
    static func file(_ path: String) throws(FormatError) -> [UInt8] {
        do {
            return try Self.read(try FileInputStream(path: path))
        } catch {
            throw .notRecognized(path: path)
        }
    }
}
