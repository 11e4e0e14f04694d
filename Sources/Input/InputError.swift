// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix

/// Why an input stream could not be opened, read or moved.
public enum InputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed (`open`, `pread`, `fstat`…).
    case io(SystemCallError, uri: String)
    /// `seek(to:)` on a stream that cannot seek, or past its end.
    case notSeekable(uri: String)
    /// The stream is not a regular file (a directory, a device).
    case notAFile(uri: String)
    /// The HTTP server answered with a status outside 200–299 that libcurl did not fail on itself (such as a
    /// 3xx without a `Location`): `mpd`'s `got HTTP status N`.
    case httpStatus(Int, uri: String)
    /// libcurl failed (connecting, resolving, TLS, an HTTP error of 400 or more, a transfer cut short, too many
    /// redirects): `message` is its error buffer, or its text for the code when that is empty.
    case curl(message: String, uri: String)
    /// An input plugin failed with `message`, all `mpd` says: FFmpeg's text for an `avio` error (its ffmpeg input
    /// plugin), libsmbclient's failed call and its errno (its smbclient plugin: `smbc_open() failed: No such
    /// file or directory`), or `Unrecognized URI` when no plugin takes the URL.
    case plugin(message: String, uri: String)
    /// ``InputStream``'s user gave up on the stream (`InputCancellation.cancel()`): every later call fails too.
    case cancelled(uri: String)

    /// Whether opening the stream failed (`open`): nothing could be read at all.
    public var isOpenFailure: Bool {
        if case .io(let error, _) = self { return error.function == "open" }
        return false
    }

    /// The text `mpd`'s input layer gives: "Failed to open '<uri>': <reason>" when opening a file failed;
    /// `mpd`'s own words for HTTP errors (`got HTTP status 300`, `CURL failed: <libcurl's message>`); a
    /// plugin's message as it is; else ``description``. Any thread.
    public var mpdMessage: String {
        if case .io(let error, let uri) = self, error.function == "open" {
            return "Failed to open '\(uri)': \(error.errno)"
        }
        switch self {
        case .httpStatus(let status, _): return "got HTTP status \(status)"
        case .curl(let message, _): return "CURL failed: \(message)"
        case .plugin(let message, _): return message
        case .cancelled: return "Cancelled"
        case .io, .notSeekable, .notAFile: return self.description
        }
    }

    /// Whether `mpd` reports the failure as a system error (ACK 52) rather than a plain one (5): its smbclient
    /// plugin throws its failed calls as system errors (`smbc_open() failed: Connection refused`); curl, nfs and
    /// ffmpeg throw plain ones.
    public var isSystemError: Bool {
        if case .plugin = self { return URIScheme.hasPrefixIgnoringCase(self.uri.utf8, "smb://") }
        return false
    }

    /// A one-line explanation naming the stream.
    public var description: String {
        switch self {
        case .io(let error, let uri): "\(uri): \(error)"
        case .notSeekable(let uri): "\(uri): cannot seek"
        case .notAFile(let uri): "\(uri): not a regular file"
        case .httpStatus, .curl, .plugin, .cancelled: "\(self.uri): \(self.mpdMessage)"
        }
    }

    /// The stream the error is about.
    public var uri: String {
        switch self {
        case .io(_, let uri), .notSeekable(let uri), .notAFile(let uri), .httpStatus(_, let uri), .curl(_, let uri),
            .plugin(_, let uri), .cancelled(let uri):
            uri
        }
    }
}
