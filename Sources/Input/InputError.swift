// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// Why an input stream could not be opened, read or moved.
public enum InputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed (`open`, `pread`, `fstat`…).
    case io(SystemCallError, uri: String)
    /// `seek(to:)` on a stream that cannot seek, or past its end.
    case notSeekable(uri: String)
    /// The stream is not a regular file (a directory, a device).
    case notAFile(uri: String)

    /// Whether opening the stream failed (`open`): nothing could be read at all.
    public var isOpenFailure: Bool {
        if case .io(let error, _) = self { return error.function == "open" }
        return false
    }

    /// The text `mpd`'s input layer gives: "Failed to open '<uri>': <reason>" when opening failed, else
    /// ``description``. Any thread.
    public var mpdMessage: String {
        if case .io(let error, let uri) = self, error.function == "open" {
            return "Failed to open '\(uri)': \(error.errno)"
        }
        return self.description
    }

    /// A one-line explanation naming the stream.
    public var description: String {
        switch self {
        case .io(let error, let uri): "\(uri): \(error)"
        case .notSeekable(let uri): "\(uri): cannot seek"
        case .notAFile(let uri): "\(uri): not a regular file"
        }
    }
}
