// SPDX-License-Identifier: GPL-3.0-or-later

/// What every http(s) stream is opened with: the `input { plugin "curl" … }` settings of `mpd` 0.23.12 and the
/// fixed values of its curl input plugin (`CurlInputPlugin.cxx`, `lib/curl/Setup.cxx`).
///
/// A value type; safe from any thread.
public struct CurlSettings: Sendable, Hashable {
    /// `proxy`: the proxy libcurl connects through (`CURLOPT_PROXY`), or `nil` for libcurl's default (which
    /// honours `http_proxy` and friends in the environment).
    public var proxy: String?
    /// `proxy_port` (`CURLOPT_PROXYPORT`); 0 leaves the port to `proxy` or libcurl.
    public var proxyPort: Int = 0
    /// `proxy_user`: sent only together with ``proxyPassword`` (`CURLOPT_PROXYUSERPWD` `user:password`).
    public var proxyUser: String?
    /// `proxy_password`.
    public var proxyPassword: String?
    /// `cacert`: a CA bundle file (`CURLOPT_CAINFO`), or `nil` for the system's.
    public var cacert: String?
    /// `verify_peer`: TLS peer verification (`CURLOPT_SSL_VERIFYPEER`, and the proxy's). Default on.
    public var verifyPeer = true
    /// `verify_host`: TLS host name verification (`CURLOPT_SSL_VERIFYHOST` 2 or 0, and the proxy's). Default on.
    public var verifyHost = true
    /// Seconds to wait for a connection (`CURLOPT_CONNECTTIMEOUT`): `mpd` fixes 10 and has no setting for it.
    /// There is no other timeout: a server that stops sending is waited for until the stream is cancelled.
    public var connectTimeout = 10
    /// The `User-Agent` header: `mpd`'s `Music Player Daemon` and its version.
    public var userAgent = "Music Player Daemon 0.23.12"
    /// Redirects followed at most (`CURLOPT_MAXREDIRS`); one more fails with libcurl's "Maximum (5) redirects
    /// followed".
    public var maximumRedirects = 5
    /// The read-ahead buffer's size in bytes (`mpd`'s `CURL_MAX_BUFFERED`, 512 KiB): the transfer pauses when
    /// a received block does not fit.
    public var bufferSize = 512 * 1024
    /// A paused transfer resumes once the buffer holds fewer bytes than this (`mpd`'s `CURL_RESUME_AT`, 384 KiB).
    public var resumeAt = 384 * 1024

    /// `mpd`'s defaults: no proxy, TLS verification on.
    public init() {}
}
