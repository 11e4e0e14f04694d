// SPDX-License-Identifier: GPL-3.0-or-later

import CCurl
import DynamicLibrary

/// libcurl (libcurl-gnutls, as Debian's `mpd` links it), loaded on first use and kept loaded.
///
/// The `fermata` binary does not link libcurl: with GnuTLS, nettle, Kerberos, LDAP, libssh2, librtmp… it cost
/// every server ~6 MiB of resident memory at start-up, used only by http(s) streams and WebDAV storage. The
/// first use opens it (`dlopen`, Debian's soname), resolves every function the wrapper calls into a table and
/// runs `curl_global_init` (as `mpd`'s curl input plugin does when it initialises): exactly once, under the
/// loader's lock, since the library is never closed (libcurl's global state, GnuTLS's, would be lost or leaked
/// on every reload).
///
/// When it cannot be loaded (not installed, a missing function, `curl_global_init` failing), the reason is
/// reported once, on stderr, and every transfer fails as `curl_easy_init` failing would.
public final class CurlLibrary: Sendable {
    /// The process's library: Debian's soname, `libcurl-gnutls.so.4`.
    public static let shared = CurlLibrary(soname: CurlLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_CURL_SONAME

    private let library: DynamicLibraries<fermata_curl_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname],
            resolve: { handles in
                let table = UnsafeMutablePointer<fermata_curl_functions>.allocate(capacity: 1)
                defer { table.deallocate() }
                if let missing = fermata_curl_resolve(table, handles[0]) {
                    let message = "\(String(cString: missing)) not found in \(soname)"
                    return .failure(DynamicLibraryError(function: "dlsym", message: message))
                }
                // Once per load, and there is one load (under the loader's lock).
                let code = table.pointee.curl_global_init(fermata_curl_global_default)
                guard code == CURLE_OK else {
                    let message = table.pointee.text(of: code)
                    return .failure(DynamicLibraryError(function: "curl_global_init", message: message))
                }
                return .success(table.pointee)
            },
            reportFailure: reportFailure ?? { message in
                reportOnStandardError("curl: input plugin unavailable: \(message)")
            })
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many times it was loaded (0 or 1).
    public var loadCount: Int { self.library.loadCount }

    /// Whether the library can be used, loading it first if it is not loaded (a failure is reported once). Any
    /// thread; the first call waits for the load (milliseconds).
    public var isAvailable: Bool { (try? self.functions()) != nil }

    /// The library's functions, loading it first if it is not loaded. Valid for the life of the process (the
    /// library is never closed). Any thread.
    ///
    /// - Throws: `DynamicLibraryError` when it cannot be loaded (the same error every time).
    func functions() throws(DynamicLibraryError) -> fermata_curl_functions {
        let functions = try self.library.acquire()
        // Never closed: no use needs to be held.
        self.library.release()
        return functions
    }
}

/// libcurl's process-wide facts: what the library supports.
///
/// Any thread.
public enum CurlGlobal {
    /// libcurl's version, such as `7.88.1`; empty when it cannot be loaded. Loads it.
    public static var version: String {
        guard let curl = try? CurlLibrary.shared.functions(),
            let info = curl.curl_version_info(fermata_curlversion_now), let version = info.pointee.version
        else {
            return ""
        }
        return String(cString: version)
    }

    /// The URI schemes `mpd`'s curl plugin reports for `urlhandlers` (`input_curl_protocols`): each protocol
    /// libcurl supports that `mpd`'s whitelist names, as `scheme://`, in `std::set` (byte) order; none when it
    /// cannot be loaded. Only `http://` and `https://` are opened (``CurlInputStream/canOpen(_:)``), as in `mpd`.
    /// Loads the library: the daemon asks a child process of its own (`fermata --plugin-schemes`).
    public static var protocols: [String] {
        let whitelist: Set<String> = [
            "ftp", "ftps", "gopher", "http", "https", "mmsh", "mmst", "rtmp", "rtmpe", "rtmps", "rtmpt", "rtmpte",
            "rtmpts", "rtp", "scp", "sftp", "smb", "srtp",
        ]
        guard let curl = try? CurlLibrary.shared.functions(),
            let info = curl.curl_version_info(fermata_curlversion_now), var entry = info.pointee.protocols
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
    }
}

extension fermata_curl_functions {
    /// libcurl's text for `code` (`curl_easy_strerror`).
    func text(of code: CURLcode) -> String {
        self.curl_easy_strerror(code).map { String(cString: $0) } ?? "CURLcode \(code.rawValue)"
    }
}
