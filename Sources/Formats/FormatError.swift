// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input

/// Why a format plugin could not read or decode a file.
public enum FormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Opening or reading the file failed.
    case io(TagFileError)
    /// The file is not in a format the plugin recognises (`mpd` would not add it to the database).
    case notRecognized(path: String)
    /// Reading the input stream failed.
    case input(InputError)
    /// The decoder library failed; its message.
    case decoder(String)
    /// The decoder produced a format the plugin cannot deliver.
    case unsupportedFormat(String)

    /// What `mpd` nests under "Failed to decode <path>" for this error: its input layer's "Failed to open
    /// '<path>': <reason>" when the file cannot be opened, else ``description``. Any thread.
    public var mpdMessage: String {
        if case .input(let error) = self { return error.mpdMessage }
        return self.description
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .io(let error): "\(error)"
        case .notRecognized(let path): "\(path): not a recognised audio file"
        case .input(let error): "\(error)"
        case .decoder(let message): message
        case .unsupportedFormat(let what): "unsupported format: \(what)"
        }
    }
}
