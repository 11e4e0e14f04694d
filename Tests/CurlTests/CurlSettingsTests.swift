// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Curl
import Testing

@Suite struct CurlSettingsTests {
    private func blocks(_ text: String) throws -> InputBlocks {
        try InputBlocks(ConfigFile(parsing: text, path: "/etc/mpd.conf").blocks(named: "input"))
    }

    @Test func defaultsAreMpds() throws {
        let configured = try #require(try CurlSettings.configured(.none))
        #expect(configured.settings == CurlSettings())
        #expect(configured.unread.isEmpty)
        let settings = CurlSettings()
        #expect(settings.verifyPeer && settings.verifyHost)
        #expect(settings.connectTimeout == 10)
        #expect(settings.maximumRedirects == 5)
        #expect(settings.bufferSize == 512 * 1024 && settings.resumeAt == 384 * 1024)
        #expect(settings.userAgent == "Music Player Daemon 0.23.12")
    }

    @Test func theBlockIsRead() throws {
        let text = """
            input {
                plugin "curl"
                proxy "proxy.example:3128"
                proxy_port "8080"
                proxy_user "me"
                proxy_password "secret"
                cacert "/etc/ssl/ca.pem"
                verify_peer "no"
                verify_host "false"
                connect_timeout "3"
            }
            input {
                plugin "curl"
                proxy "ignored"
            }
            """
        let configured = try #require(try CurlSettings.configured(self.blocks(text)))
        var expected = CurlSettings()
        expected.proxy = "proxy.example:3128"
        expected.proxyPort = 8080
        expected.proxyUser = "me"
        expected.proxyPassword = "secret"
        expected.cacert = "/etc/ssl/ca.pem"
        expected.verifyPeer = false
        expected.verifyHost = false
        #expect(configured.settings == expected)
        // mpd 0.23.12 has no connect_timeout setting.
        #expect(
            configured.unread == [
                ConfigParameter(name: "connect_timeout", value: "3", file: "/etc/mpd.conf", line: 10)
            ])
    }

    @Test func disabledAndBadValues() throws {
        #expect(try CurlSettings.configured(self.blocks("input {\n plugin \"curl\"\n enabled \"no\"\n}")) == nil)
        // Other plugins' blocks are not the curl plugin's.
        #expect(try CurlSettings.configured(self.blocks("input {\n plugin \"qobuz\"\n enabled \"no\"\n}")) != nil)
        #expect(throws: ConfigError.self) { try self.blocks("input {\n proxy \"x\"\n}") }
        let boolean = #expect(throws: ConfigError.self) {
            try CurlSettings.configured(self.blocks("input {\n plugin \"curl\"\n verify_peer \"maybe\"\n}"))
        }
        #expect(
            boolean?.message
                == "Failed to initialize input plugin 'curl'; Error in setting \"verify_peer\" on line 3; Not a valid boolean (\"yes\" or \"no\"): \"maybe\""
        )
        let port = #expect(throws: ConfigError.self) {
            try CurlSettings.configured(self.blocks("input {\n plugin \"curl\"\n proxy_port \"-1\"\n}"))
        }
        #expect(
            port?.message.hasPrefix(
                "Failed to initialize input plugin 'curl'; Error in setting \"proxy_port\" on line 3; ") == true)
    }
}
