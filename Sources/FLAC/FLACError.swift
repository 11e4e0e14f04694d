// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// Why libFLAC could not read a stream's metadata or decode it.
public enum FLACError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Reading the input stream failed (libFLAC saw an aborted read).
    case input(InputError)
    /// A libFLAC call failed; the function and libFLAC's name for the state or status it reported
    /// (`FLAC__STREAM_DECODER_ABORTED`, `FLAC__METADATA_CHAIN_STATUS_NOT_A_FLAC_FILE`…).
    case library(function: String, status: String)
    /// The stream has no STREAMINFO block (and is seekable, so `mpd` would not guess from the first frame).
    case missingStreamInfo
    /// A frame does not fit what STREAMINFO announced (more samples than its maximum block size, another
    /// channel count): decoding stops rather than write past the buffers sized from STREAMINFO.
    case frameMismatch(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .input(let error): "\(error)"
        case .library(let function, let status): "\(function): \(status)"
        case .missingStreamInfo: "no STREAMINFO block"
        case .frameMismatch(let what): "frame does not match STREAMINFO: \(what)"
        }
    }
}
