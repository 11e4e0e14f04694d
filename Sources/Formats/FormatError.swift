// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import MPG123

/// Why a format plugin could not read or decode a file.
public enum FormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Opening or reading the file failed.
    case io(TagFileError)
    /// The file is not in a format the plugin recognises (`mpd` would not add it to the database).
    case notRecognized(path: String)
    /// The decoder library failed.
    case decoder(MPG123Error)
    /// The decoder produced a format the plugin cannot deliver.
    case unsupportedFormat(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .io(let error): "\(error)"
        case .notRecognized(let path): "\(path): not a recognised audio file"
        case .decoder(let error): "\(error)"
        case .unsupportedFormat(let what): "unsupported format: \(what)"
        }
    }
}
