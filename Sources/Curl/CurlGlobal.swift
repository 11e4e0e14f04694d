// SPDX-License-Identifier: GPL-3.0-or-later

import CCurl

/// libcurl's process-wide state: `curl_global_init` once, and what the library supports.
///
/// Any thread.
public enum CurlGlobal {
    /// Whether `curl_global_init` succeeded; run on first use (Swift's lazy globals are thread-safe).
    static let initialized: Bool = curl_global_init(fermata_curl_global_default) == CURLE_OK

    /// libcurl's version, such as `7.88.1`.
    public static var version: String {
        guard let info = curl_version_info(fermata_curlversion_now), let version = info.pointee.version else {
            return ""
        }
        return String(cString: version)
    }

    /// The URI schemes `mpd`'s curl plugin reports for `urlhandlers` (`input_curl_protocols`): each protocol
    /// libcurl supports that `mpd`'s whitelist names, as `scheme://`, in `std::set` (byte) order. Only
    /// `http://` and `https://` are opened (``CurlInputStream/canOpen(_:)``), as in `mpd`.
    public static let protocols: [String] = {
        let whitelist: Set<String> = [
            "ftp", "ftps", "gopher", "http", "https", "mmsh", "mmst", "rtmp", "rtmpe", "rtmps", "rtmpt", "rtmpte",
            "rtmpts", "rtp", "scp", "sftp", "smb", "srtp",
        ]
        guard initialized, let info = curl_version_info(fermata_curlversion_now), var entry = info.pointee.protocols
        else {
            return []
        }
        var schemes = Set<String>()
        while let name = entry.pointee {
            let scheme = String(cString: name)
            if whitelist.contains(scheme.lowercased()) { schemes.insert(scheme + "://") }
            entry += 1
        }
        return schemes.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }()
}
