// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration

extension CurlSettings {
    /// The curl input's settings from the `input { plugin "curl" … }` block, read as `mpd` 0.23.12's
    /// `input_curl_init` reads them: `proxy`, `proxy_port` (a number of zero or more), `proxy_user`,
    /// `proxy_password`, `cacert`, `verify_peer` and `verify_host` (booleans, default yes). `mpd` has no
    /// setting for the connect timeout (10 s) or the buffer sizes.
    ///
    /// - Parameter blocks: The configuration's `input` blocks.
    /// - Returns: the settings and the lines of the block nothing read (which `mpd` warns about once started), or
    ///   `nil` when the block says `enabled "no"` (then no http(s) stream is opened, and `urlhandlers` lists none
    ///   of the plugin's schemes).
    /// - Throws: `ConfigError` for a bad `enabled` (`Error in setting "enabled" on line N; Not a valid
    ///   boolean…`) and, nested in `Failed to initialize input plugin 'curl'` as `mpd` reports it, for a bad
    ///   `proxy_port`, `verify_peer` or `verify_host`.
    public static func configured(_ blocks: InputBlocks) throws(ConfigError) -> (
        settings: CurlSettings, unread: [ConfigParameter]
    )? {
        guard var block = try blocks.settings(forPlugin: "curl") else { return nil }
        var settings = CurlSettings()
        do {
            settings.proxy = block.string("proxy")
            settings.proxyPort = try block.unsigned("proxy_port") ?? 0
            settings.proxyUser = block.string("proxy_user")
            settings.proxyPassword = block.string("proxy_password")
            settings.cacert = block.string("cacert")
            settings.verifyPeer = try block.bool("verify_peer") ?? true
            settings.verifyHost = try block.bool("verify_host") ?? true
        } catch {
            throw ConfigError(
                location: error.location, message: "Failed to initialize input plugin 'curl'; \(error.message)")
        }
        return (settings, block.unread)
    }
}
