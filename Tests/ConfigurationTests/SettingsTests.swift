// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Testing

@testable import Configuration

struct SettingsTests {
    private static let path = "/etc/fermata/mpd.conf"
    private static let environment = ["HOME": "/home/listener"]

    private func settings(_ text: String) throws -> Settings {
        try Settings(file: ConfigFile(parsing: text, path: Self.path), environment: Self.environment)
    }

    /// The error for `line`, placed on line 2 after a harmless first line.
    private func failure(_ line: String) throws -> ConfigError {
        let file = try ConfigFile(parsing: "port \"6600\"\n" + line + "\n", path: Self.path)
        do {
            _ = try Settings(file: file, environment: Self.environment)
        } catch {
            return error
        }
        Issue.record("no error for \(line)")
        return ConfigError(file: "", line: 0, message: "")
    }

    private func expectFailure(_ line: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let error = try self.failure(line)
        #expect(error.message == message, sourceLocation: sourceLocation)
        #expect(error.location == ConfigLocation(file: Self.path, line: 2), sourceLocation: sourceLocation)
        #expect(error.description == "\(Self.path):2: \(message)", sourceLocation: sourceLocation)
    }

    // MARK: - Defaults

    @Test func hasMPDDefaults() throws {
        let settings = Settings()
        #expect(settings.musicDirectory == nil)
        #expect(settings.playlistDirectory == nil)
        #expect(settings.dbFile == nil)
        #expect(settings.stateFile == nil)
        #expect(settings.stickerFile == nil)
        #expect(settings.logFile == nil)
        #expect(settings.logLevel == .notice)
        #expect(settings.pidFile == nil)
        #expect(settings.bindAddresses.isEmpty)
        #expect(settings.port == 6600)
        #expect(settings.connectionTimeoutSeconds == 60)
        #expect(settings.maxConnections == 100)
        #expect(settings.maxCommandListSize == 2048 * 1024)
        #expect(settings.maxOutputBufferSize == 8192 * 1024)
        #expect(settings.maxPlaylistLength == 16384)
        #expect(settings.metadataToUse == .defaultMetadata)
        #expect(settings.autoUpdate == false)
        #expect(settings.autoUpdateDepth == nil)
        #expect(settings.followInsideSymlinks)
        #expect(settings.followOutsideSymlinks)
        #expect(settings.zeroconfEnabled)
        #expect(settings.zeroconfName == "Music Player @ %h")
        #expect(settings.passwords.isEmpty)
        #expect(settings.defaultPermissions == nil)
        #expect(settings.localPermissions == nil)
        #expect(settings.hostPermissions.isEmpty)
        #expect(settings.restorePaused == false)
        #expect(settings.stateFileInterval == 120)
        #expect(settings.audioOutputs.isEmpty)
        #expect(settings.warnings.isEmpty)
        // A parsed file also knows the home directory that `~` in decoder block paths stands for.
        var parsed = settings
        parsed.decoders.home = "/home/listener"
        #expect(try self.settings("") == parsed)
        #expect(try self.settings("# nothing\n\n") == parsed)
    }

    // MARK: - Values

    @Test func readsEveryTypedOption() throws {
        let settings = try self.settings(
            """
            music_directory "~/Music"
            playlist_directory "/var/lib/mpd/playlists"
            db_file "~/.cache/mpd/db"
            state_file "/var/lib/mpd/state"
            sticker_file "/var/lib/mpd/sticker.sql"
            log_file "/var/log/mpd.log"
            log_level "verbose"
            pid_file "~"
            bind_to_address "127.0.0.1"
            bind_to_address "~/.mpd/socket"
            bind_to_address "any"
            port "6601"
            connection_timeout "30"
            max_connections "5"
            max_command_list_size "1"
            max_output_buffer_size "16384"
            max_playlist_length "100"
            metadata_to_use "artist,title"
            auto_update "yes"
            auto_update_depth "0"
            follow_inside_symlinks "no"
            follow_outside_symlinks "FALSE"
            zeroconf_enabled "0"
            zeroconf_name "Den @ %h"
            password "s3cret@read,add"
            password "admin@read,add,player,control,admin"
            default_permissions "read"
            local_permissions "read,add,player,control,admin"
            host_permissions "192.168.1.2 read,add"
            restore_paused "TRUE"
            state_file_interval "0"
            audio_output {
                type "alsa"
                name "Speakers"
            }
            audio_output {
                type "null"
                name "Null"
            }
            """)
        #expect(settings.musicDirectory == "/home/listener/Music")
        #expect(settings.playlistDirectory == "/var/lib/mpd/playlists")
        #expect(settings.dbFile == "/home/listener/.cache/mpd/db")
        #expect(settings.stateFile == "/var/lib/mpd/state")
        #expect(settings.stickerFile == "/var/lib/mpd/sticker.sql")
        #expect(settings.logFile == "/var/log/mpd.log")
        #expect(settings.logLevel == .debug)
        #expect(settings.pidFile == "/home/listener")
        #expect(settings.bindAddresses.map(\.value) == ["127.0.0.1", "~/.mpd/socket", "any"])
        #expect(settings.port == 6601)
        #expect(settings.connectionTimeoutSeconds == 30)
        #expect(settings.maxConnections == 5)
        #expect(settings.maxCommandListSize == 1024)
        #expect(settings.maxOutputBufferSize == 16 * 1024 * 1024)
        #expect(settings.maxPlaylistLength == 100)
        #expect(settings.metadataToUse == TagMask([.artist, .title]))
        #expect(settings.autoUpdate)
        #expect(settings.autoUpdateDepth == 0)
        #expect(settings.followInsideSymlinks == false)
        #expect(settings.followOutsideSymlinks == false)
        #expect(settings.zeroconfEnabled == false)
        #expect(settings.zeroconfName == "Den @ %h")
        #expect(settings.passwords == ["s3cret@read,add", "admin@read,add,player,control,admin"])
        #expect(settings.defaultPermissions == "read")
        #expect(settings.localPermissions == "read,add,player,control,admin")
        #expect(settings.hostPermissions.map(\.value) == ["192.168.1.2 read,add"])
        #expect(settings.restorePaused)
        #expect(settings.stateFileInterval == 0)
        #expect(settings.audioOutputs.map { $0["name"] } == ["Speakers", "Null"])
        #expect(settings.audioOutputs.first?.line == 32)
    }

    @Test func lastRepeatedSettingWinsAndOnlyItIsChecked() throws {
        let settings = try self.settings(
            "port \"nonsense\"\nport \"6602\"\nport \"6603\"\nlog_level \"bogus\"\nlog_level \"error\"\n")
        #expect(settings.port == 6603)
        #expect(settings.logLevel == .error)
        let error = try self.failure("port \"0\"")
        #expect(error.line == 2)
    }

    @Test func keepsStorageURIsAndSyslog() throws {
        let settings = try self.settings("music_directory \"nfs://server/music\"\nlog_file \"syslog\"\n")
        #expect(settings.musicDirectory == "nfs://server/music")
        #expect(settings.logFile == "syslog")
    }

    @Test func expandsTildeUserWhenTheUserExists() throws {
        let settings = try self.settings("music_directory \"~root/music\"\n")
        let root = try #require(FileManager.default.homeDirectory(forUser: "root")?.path)
        #expect(settings.musicDirectory == root + "/music")
    }

    @Test(arguments: [
        "music_directory", "playlist_directory", "db_file", "state_file", "sticker_file", "pid_file",
    ])
    func requiresAbsolutePaths(name: String) throws {
        // mpd reads `db_file` as the simple database plugin's `path`, and says so.
        let prefix = name == "db_file" ? "Failed to initialize database plugin 'simple'; " : ""
        try self.expectFailure("\(name) \"relative/path\"", prefix + "not an absolute path: relative/path")
        try self.expectFailure("\(name) \"\"", prefix + "not an absolute path: ")
        try self.expectFailure(
            "\(name) \"~no_such_user_fermata/x\"", prefix + "no such user: no_such_user_fermata")
    }

    @Test func aBadLogFileIsKeptForWhenTheLogGoesThere() throws {
        // mpd reads log_file only where it logs to it (not with --stderr): the daemon decides.
        let settings = try self.settings("log_file \"relative.log\"\n")
        #expect(settings.logFile == nil)
        #expect(settings.logFileError?.message == "not an absolute path: relative.log")
        #expect(settings.logFileError?.line == 1)
    }

    @Test func readsTheSimpleDatabaseBlock() throws {
        #expect(try self.settings("db_file \"/var/db\"\n").dbCompress)
        var settings = try self.settings("database {\n plugin \"simple\"\n path \"/var/db\"\n compress \"no\"\n}\n")
        #expect(settings.dbFile == "/var/db")
        #expect(!settings.dbCompress)
        #expect(settings.warnings.isEmpty)
        settings = try self.settings("database {\n path \"~/db\"\n}\n")
        #expect(settings.dbFile == "/home/listener/db")
        #expect(settings.dbCompress)
        #expect(settings.hidePlaylistTargets)
        settings = try self.settings("database {\n path \"/var/db\"\n hide_playlist_targets \"no\"\n}\n")
        #expect(!settings.hidePlaylistTargets)
        #expect(settings.warnings.isEmpty)
        let initializing = "Failed to initialize database plugin 'simple'; "
        try self.expectFailure("database {\n compress \"no\"\n}", initializing + "No \"path\" parameter specified")
        // Errors in a key are on its line.
        let relative = try self.failure("database {\n path \"relative\"\n}")
        #expect(relative.line == 3 && relative.message == initializing + "not an absolute path: relative")
        let boolean = try self.failure("database {\n path \"/var/db\"\n compress \"maybe\"\n}")
        #expect(
            boolean.message
                == initializing
                + "Error in setting \"compress\" on line 4; Not a valid boolean (\"yes\" or \"no\"): \"maybe\"")
        // mpd's constructor reads every key before it needs `path`.
        let beforePath = try self.failure("database {\n hide_playlist_targets \"2\"\n}")
        #expect(
            beforePath.message
                == initializing
                + "Error in setting \"hide_playlist_targets\" on line 3; Not a valid boolean (\"yes\" or \"no\"): \"2\""
        )
        let cache = try self.failure("database {\n cache_directory \"c\"\n}")
        #expect(cache.message == initializing + "not an absolute path: c")
        try self.expectFailure("database {\n plugin \"bogus\"\n}", "No such database plugin: bogus")
        // A plugin Fermata does not run still has its values checked as mpd's constructor checks them.
        let port = try self.failure("database {\n plugin \"proxy\"\n port \"-1\"\n}")
        #expect(
            port.message
                == "Failed to initialize database plugin 'proxy'; Error in setting \"port\" on line 4; "
                + "Value must not be negative")
        let both = try self.failure("db_file \"/var/db\"\ndatabase {\n path \"/var/db\"\n}")
        #expect(both.message == "Found both 'database' (line 3) and 'db_file' (line 2) setting")
        settings = try self.settings("database {\n plugin \"proxy\"\n host \"x\"\n}\n")
        #expect(settings.dbFile == nil)
        #expect(
            settings.warnings == [
                "\(Self.path):1: database plugin \"proxy\" is not supported by Fermata yet and is ignored"
            ])
        // mpd's cache_directory: where mounted storages' databases are kept.
        settings = try self.settings("database {\n path \"/var/db\"\n cache_directory \"/var/cache\"\n}\n")
        #expect(settings.dbFile == "/var/db")
        #expect(settings.cacheDirectory == "/var/cache")
        #expect(settings.warnings.isEmpty)
        settings = try self.settings("database {\n path \"/var/db\"\n}\n")
        #expect(settings.cacheDirectory == nil)
    }

    // MARK: - Log levels

    @Test(arguments: [
        ("error", LogLevel.error), ("warning", .warning), ("notice", .notice), ("default", .notice),
        ("info", .info), ("secure", .info), ("verbose", .debug),
    ])
    func readsALogLevel(value: String, level: LogLevel) throws {
        #expect(try self.settings("log_level \"\(value)\"\n").logLevel == level)
    }

    @Test(arguments: ["debug", "ERROR", "Notice", "", " notice", "trace"])
    func rejectsALogLevel(value: String) throws {
        try self.expectFailure("log_level \"\(value)\"", "unknown log level \"\(value)\"")
    }

    // MARK: - Booleans

    @Test(arguments: [
        ("yes", true), ("YES", true), ("Yes", true), ("true", true), ("TRUE", true), ("1", true),
        ("no", false), ("No", false), ("false", false), ("FALSE", false), ("0", false),
    ])
    func readsABoolean(value: String, expected: Bool) throws {
        let settings = try self.settings(
            """
            zeroconf_enabled "\(value)"
            auto_update "\(value)"
            restore_paused "\(value)"
            follow_inside_symlinks "\(value)"
            follow_outside_symlinks "\(value)"
            """)
        #expect(settings.zeroconfEnabled == expected)
        #expect(settings.autoUpdate == expected)
        #expect(settings.restorePaused == expected)
        #expect(settings.followInsideSymlinks == expected)
        #expect(settings.followOutsideSymlinks == expected)
    }

    @Test func aBadZeroconfEnabledTurnsZeroconfOffAsMpd() throws {
        let settings = try self.settings("zeroconf_enabled \"maybe\"\n")
        #expect(!settings.zeroconfEnabled)
        #expect(
            settings.reports == [
                ConfigReport(
                    moment: .zeroconf, domain: "exception", severity: .error,
                    text:
                        "Zeroconf initialization failed: Error on line 1; Not a valid boolean (\"yes\" or \"no\"): \"maybe\""
                )
            ])
        #expect(try self.settings("zeroconf_enabled \"yes\"\n").reports.isEmpty)
    }

    @Test(arguments: ["auto_update", "restore_paused", "follow_inside_symlinks", "follow_outside_symlinks"])
    func rejectsABadBoolean(name: String) throws {
        for value in ["maybe", "y", "n", " no", "yes ", "", "2", "on"] {
            try self.expectFailure("\(name) \"\(value)\"", "Not a valid boolean (\"yes\" or \"no\"): \"\(value)\"")
        }
    }

    // MARK: - Numbers

    @Test(arguments: [("6601", 6601), (" 6601", 6601), ("+6601", 6601), ("06601", 6601), ("1", 1), ("65535", 65535)])
    func readsAPort(value: String, port: Int) throws {
        #expect(try self.settings("port \"\(value)\"\n").port == port)
    }

    @Test(arguments: [
        ("abc", "Failed to parse number"),
        ("", "Failed to parse number"),
        ("6601 ", "Failed to parse number"),
        ("6601x", "Failed to parse number"),
        ("0x10", "Failed to parse number"),
        ("1.5", "Failed to parse number"),
        ("+", "Failed to parse number"),
        ("--1", "Failed to parse number"),
        ("0", "Value must be positive"),
        ("-0", "Value must be positive"),
        ("-1", "Value must be positive"),
        ("-99999999999999999999999", "Value must be positive"),
        ("65536", "Value too large"),
        ("70000", "Value too large"),
        ("99999999999999999999999", "Value too large"),
    ])
    func rejectsABadPort(value: String, message: String) throws {
        try self.expectFailure("port \"\(value)\"", message)
    }

    @Test(arguments: [
        "connection_timeout", "max_connections", "max_playlist_length", "max_command_list_size",
        "max_output_buffer_size",
    ])
    func requiresAPositiveNumber(name: String) throws {
        try self.expectFailure("\(name) \"0\"", "Value must be positive")
        try self.expectFailure("\(name) \"-5\"", "Value must be positive")
        try self.expectFailure("\(name) \"x\"", "Failed to parse number")
        try self.expectFailure("\(name) \"5 \"", "Failed to parse number")
        try self.expectFailure("\(name) \"99999999999999999999\"", "Value too large")
    }

    @Test func readsPlainNumbers() throws {
        let settings = try self.settings(
            "connection_timeout \"123\"\nmax_connections \" 7\"\nmax_playlist_length \"+99\"\n")
        #expect(settings.connectionTimeoutSeconds == 123)
        #expect(settings.maxConnections == 7)
        #expect(settings.maxPlaylistLength == 99)
    }

    @Test(arguments: [("1", 1024), ("2048", 2048 * 1024), ("8192", 8192 * 1024), ("1048576", 1 << 30)])
    func convertsKiBToBytes(value: String, bytes: Int) throws {
        let settings = try self.settings("max_command_list_size \"\(value)\"\nmax_output_buffer_size \"\(value)\"\n")
        #expect(settings.maxCommandListSize == bytes)
        #expect(settings.maxOutputBufferSize == bytes)
    }

    @Test(arguments: ["max_command_list_size", "max_output_buffer_size"])
    func rejectsAKiBCountThatOverflowsInBytes(name: String) throws {
        try self.expectFailure("\(name) \"\(Int.max / 1024 + 1)\"", "Value too large")
        #expect(try self.settings("\(name) \"\(Int.max / 1024)\"\n") != Settings())
    }

    @Test func readsNonNegativeNumbers() throws {
        let settings = try self.settings(
            "state_file_interval \"300\"\nauto_update \"yes\"\nauto_update_depth \"3\"\n")
        #expect(settings.stateFileInterval == 300)
        #expect(settings.autoUpdateDepth == 3)
    }

    @Test func readsAutoUpdateDepthOnlyWithAutoUpdateAsMpd() throws {
        // Without auto_update, mpd never reads it.
        var settings = try self.settings("auto_update_depth \"x\"\n")
        #expect(settings.autoUpdateDepth == nil && settings.reports.isEmpty && !settings.autoUpdate)
        // With it, a bad value is logged where watching would start, and nothing is watched.
        settings = try self.settings("auto_update \"yes\"\nauto_update_depth \"-1\"\n")
        #expect(!settings.autoUpdate)
        #expect(
            settings.reports(at: .watching) == [
                ConfigReport(
                    moment: .watching, domain: "exception", severity: .error,
                    text: "Error on line 2; Value must not be negative")
            ])
        #expect(settings.reports(at: .start).isEmpty && settings.reports(at: .zeroconf).isEmpty)
    }

    @Test(arguments: ["state_file_interval"])
    func rejectsANegativeOrBadNumber(name: String) throws {
        try self.expectFailure("\(name) \"-1\"", "Value must not be negative")
        try self.expectFailure("\(name) \"x\"", "Failed to parse number")
        try self.expectFailure("\(name) \"99999999999999999999\"", "Value too large")
    }

    // MARK: - metadata_to_use

    private static let allButComment = TagMask.defaultMetadata

    private static func defaults(adding added: [TagType] = [], removing removed: [TagType] = []) -> TagMask {
        var mask = TagMask.defaultMetadata
        for tag in added { mask.insert(tag) }
        for tag in removed { mask.remove(tag) }
        return mask
    }

    @Test(arguments: [
        ("none", TagMask.none),
        ("NONE", TagMask.none),
        ("None", TagMask.none),
        ("", TagMask.none),
        ("artist", TagMask([.artist])),
        ("artist,album,title", TagMask([.artist, .album, .title])),
        ("  Artist ,  ALBUM  ", TagMask([.artist, .album])),
        ("musicbrainz_trackid,Comment", TagMask([.musicBrainzTrackID, .comment])),
        ("+comment", SettingsTests.defaults(adding: [.comment])),
        ("-genre", SettingsTests.defaults(removing: [.genre])),
        ("+comment,-genre", SettingsTests.defaults(adding: [.comment], removing: [.genre])),
        ("+comment, - genre ,+ label", SettingsTests.defaults(adding: [.comment], removing: [.genre])),
        ("-genre,album", SettingsTests.defaults(removing: [.genre, .album])),
        ("+comment,genre", SettingsTests.defaults(adding: [.comment])),
        ("artist,-album", TagMask([.artist])),
        ("artist,+comment", TagMask([.artist, .comment])),
        (" +comment, -genre", TagMask([.comment])),
    ])
    func readsMetadataToUse(value: String, mask: TagMask) throws {
        #expect(try self.settings("metadata_to_use \"\(value)\"\n").metadataToUse == mask)
    }

    @Test(arguments: [
        ("bogus", "bogus"),
        ("+bogus", "bogus"),
        ("artist, bogus ", "bogus"),
        ("artist,,album", ""),
        ("artist,", ""),
        (" none", "none"),
        ("none,artist", "none"),
        ("+none", "none"),
        ("   ", ""),
        ("title;artist", "title;artist"),
    ])
    func rejectsABadMetadataItem(value: String, item: String) throws {
        try self.expectFailure("metadata_to_use \"\(value)\"", "error parsing metadata item \"\(item)\"")
    }

    // MARK: - Permissions

    @Test func checksPasswordsAndPermissionLists() throws {
        try self.expectFailure("password \"secret\"", "\"@\" not found in password string")
        try self.expectFailure("password \"s@bogus\"", "unknown permission \"bogus\"")
        try self.expectFailure("password \"s@read,READ\"", "unknown permission \"READ\"")
        try self.expectFailure("default_permissions \"none\"", "unknown permission \"none\"")
        try self.expectFailure("default_permissions \"read, add\"", "unknown permission \" add\"")
        try self.expectFailure("local_permissions \"read,write\"", "unknown permission \"write\"")
        try self.expectFailure("password \"a@b@read\"", "unknown permission \"b@read\"")
        try self.expectFailure("host_permissions \"127.0.0.1 bogus\"", "unknown permission \"bogus\"")
        try self.expectFailure("host_permissions \"127.0.0.1  read\"", "unknown permission \" read\"")
        try self.expectFailure("host_permissions \" read\"", "Failed to extract host name")
        try self.expectFailure("host_permissions \"\"", "Failed to extract host name")
        let settings = try self.settings(
            "password \"s@\"\npassword \"@read\"\npassword \"a@read,admin\"\ndefault_permissions \"\"\n"
                + "local_permissions \"read,,add,\"\nhost_permissions \"127.0.0.1\"\n")
        #expect(settings.passwords == ["s@", "@read", "a@read,admin"])
        #expect(settings.defaultPermissions == "")
        #expect(settings.localPermissions == "read,,add,")
        #expect(settings.hostPermissions.map(\.value) == ["127.0.0.1"])
    }

    // MARK: - Warnings

    @Test func warnsAboutEveryOptionFermataDoesNotActOn() throws {
        let settings = try self.settings(
            """
            music_directory "/music"
            port "6600"
            gapless_mp3_playback "yes"
            port "6601"
            audio_output {
                type "null"
            }
            bind_to_address "any"
            neighbors {
                plugin "upnp"
            }
            neighbors {
                plugin "udisks"
            }
            log_level "notice"
            """)
        #expect(
            settings.warnings == [
                "\(Self.path):3: config parameter \"gapless_mp3_playback\" is deprecated and ignored",
                "\(Self.path):9: neighbor plugin \"upnp\" is not supported by Fermata yet and is ignored",
            ])
        #expect(settings.neighbors.map(\.plugin) == ["upnp", "udisks"])
        #expect(settings.neighbors.map(\.isSupported) == [false, true])
        #expect(settings.neighbors.map(\.location.line) == [9, 12])
    }

    @Test func neighborsBlocksNeedAPluginMpdHas() throws {
        try self.expectFailure("neighbors {\n}", "Missing \"plugin\" configuration")
        try self.expectFailure("neighbors {\n  name \"x\"\n}", "Missing \"plugin\" configuration")
        try self.expectFailure("neighbors {\n  plugin \"zeroconf\"\n}", "No such neighbor plugin: zeroconf")
        #expect(try self.settings("").neighbors.isEmpty)
    }

    @Test func doesNotWarnAboutSupportedOptions() throws {
        var text = ""
        let values = [
            "music_directory": "/m", "bind_to_address": "any", "port": "6600", "connection_timeout": "60",
            "max_connections": "100", "max_command_list_size": "2048", "max_output_buffer_size": "8192",
            "metadata_to_use": "+comment", "log_file": "syslog", "log_level": "notice", "pid_file": "/run/x.pid",
            "db_file": "/var/db", "follow_inside_symlinks": "yes", "follow_outside_symlinks": "no",
            "auto_update": "yes", "auto_update_depth": "3", "password": "secret@read",
            "default_permissions": "read", "local_permissions": "read,add", "host_permissions": "localhost read",
            "sticker_file": "/var/sticker.sql",
            "playlist_directory": "/var/playlists", "save_absolute_paths_in_playlists": "yes",
            "zeroconf_enabled": "no", "zeroconf_name": "Den @ %h", "audio_output_format": "44100:16:2",
            "mixer_type": "software", "audio_buffer_size": "8192", "replaygain": "album", "replaygain_preamp": "-3.5",
            "replaygain_missing_preamp": "2", "replaygain_limit": "no", "max_playlist_length": "100",
            "state_file": "/var/state", "state_file_interval": "10", "restore_paused": "yes", "user": "root",
            "group": "root", "filesystem_charset": "UTF-8", "samplerate_converter": "soxr very high",
            "volume_normalization": "no",
        ]
        #expect(Set(values.keys) == Settings.supportedOptions)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) { text += "\(name) \"\(value)\"\n" }
        #expect(try self.settings(text).warnings.isEmpty)
    }

    @Test func warnsAboutEveryUnsupportedOptionInTheTable() throws {
        var text = ""
        let supported = Settings.supportedOptions.union(Settings.supportedBlocks)
        for option in ConfigOption.all where !supported.contains(option.name) {
            text += option.kind == .block ? "\(option.name) {\n}\n" : "\(option.name) \"x\"\n"
        }
        let file = try ConfigFile(parsing: text, path: Self.path)
        let warnings = Settings.warnings(for: file)
        #expect(warnings.count == ConfigOption.all.count - supported.count)
        #expect(warnings.allSatisfy { $0.hasPrefix(Self.path + ":") })
    }

    @Test(arguments: [
        ("plugin \"soxr\"\n quality \"high\"\n threads \"2\"\n type \"x\"\n precision \"20\"", ["type", "precision"]),
        ("plugin \"soxr\"\n quality \"custom\"\n precision \"20\"\n flags \"1\"\n bogus \"1\"", ["bogus"]),
        ("plugin \"libsamplerate\"\n type \"0\"\n quality \"high\"", ["quality"]),
        ("plugin \"internal\"\n type \"0\"", ["type"]),
    ])
    func warnsAboutTheResamplerKeysItsPluginDoesNotRead(body: String, unread: [String]) throws {
        let settings = try self.settings("resampler {\n \(body)\n}")
        let lines = body.split(separator: "\n").map { $0.trimmingPrefix(" ") }
        #expect(settings.warnings.isEmpty)
        #expect(
            settings.blockCheck.warnings(unread: settings.unread)
                == unread.map { key in
                    let line = 2 + lines.firstIndex { $0.hasPrefix(key + " ") }!
                    return "option '\(key)' on line \(line) was not recognized"
                })
    }

    // MARK: - Real files

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/mpd.conf")))
    func readsDebiansShippedConfiguration() throws {
        let file = try ConfigFile(contentsOf: "/etc/mpd.conf")
        let settings = try Settings(file: file)
        #expect(!file.parameters.isEmpty)
        #expect(settings.warnings.isEmpty, "Fermata acts on every option Debian's mpd.conf sets")
        #expect(settings.user == "mpd")
    }

    @Test func theSampleConfigurationGivesNoWarning() throws {
        // Tests/ConfigurationTests/SettingsTests.swift, three levels below the repository.
        let repository = "\(#filePath)".split(separator: "/").dropLast(3).joined(separator: "/")
        let file = try ConfigFile(contentsOf: "/" + repository + "/etc/fermata.conf")
        #expect(!file.parameters.isEmpty)
        #expect(try Settings(file: file, environment: Self.environment).warnings.isEmpty)
    }

    @Test func readsVolumeNormalizationAndFilterTemplates() throws {
        #expect(try self.settings("").volumeNormalization == false)
        let settings = try self.settings(
            "volume_normalization \"yes\"\nfilter {\n  plugin \"route\"\n  name \"swap\"\n  routes \"0>1, 1>0\"\n}\n")
        #expect(settings.volumeNormalization)
        #expect(settings.filters.map { $0["name"] } == ["swap"])
        #expect(settings.warnings.isEmpty)
        #expect(throws: ConfigError.self) { try self.settings("volume_normalization \"maybe\"\n") }
    }

    @Test func readsTheResampler() throws {
        #expect(try self.settings("").resampler == ResamplerSetting())
        // Debian's mpd: libsamplerate's Fastest Sinc Interpolator.
        #expect(try self.settings("").resampler.plugin == .libsamplerate(type: "2", location: nil))
        let block = try self.settings("resampler {\n  plugin \"soxr\"\n  quality \"very high\"\n  threads \"2\"\n}\n")
        #expect(block.resampler.plugin == .soxr(.veryHigh) && block.warnings.isEmpty && block.unread.isEmpty)
        #expect(try self.settings("samplerate_converter \"soxr quick\"\n").resampler.plugin == .soxr(.quick))
        #expect(try self.settings("samplerate_converter \"soxr\"\n").resampler.plugin == .soxr(.high))
        let converter = try self.settings("port \"6600\"\nsamplerate_converter \"Fastest Sinc Interpolator\"\n")
        #expect(
            converter.resampler.plugin
                == .libsamplerate(
                    type: "Fastest Sinc Interpolator", location: ConfigLocation(file: Self.path, line: 2)))
        #expect(converter.warnings.isEmpty && converter.unread.isEmpty)
        let lsr = try self.settings("resampler {\n  plugin \"libsamplerate\"\n  type \"best\"\n}\n")
        #expect(
            lsr.resampler.plugin == .libsamplerate(type: "best", location: ConfigLocation(file: Self.path, line: 1)))
        #expect(lsr.warnings.isEmpty && lsr.unread.isEmpty)
        #expect(try self.settings("samplerate_converter \"internal\"\n").resampler.plugin == .internal)
        #expect(try self.settings("samplerate_converter \"\"\n").resampler.plugin == .internal)
    }

    @Test func readsSoxrsCustomRecipe() throws {
        let custom = try self.settings(
            "resampler {\n plugin \"soxr\"\n quality \"custom\"\n precision \"0x1c\"\n phase_response \"25\"\n"
                + " passband_end \"90.5\"\n stopband_begin \"1.1e2\"\n attenuation \"10\"\n flags \"0x4f\"\n}\n")
        #expect(
            custom.resampler.plugin
                == .soxrCustom(
                    SoxrCustomRecipe(
                        precision: 28, phaseResponse: 25, passbandEnd: 0.905, stopbandBegin: 1.1, flags: 0x0F,
                        scale: 0.1)))
        #expect(custom.warnings.isEmpty && custom.unread.isEmpty)
        let defaults = try self.settings("resampler {\n plugin \"soxr\"\n quality \"custom\"\n precision \"16\"\n}\n")
        #expect(defaults.resampler.plugin == .soxrCustom(SoxrCustomRecipe(precision: 16)))
        // mpd (built with -ffast-math) multiplies by 0.01 and 0.1 where its source divides by 100 and 10: the values
        // its soxr_create got, read with gdb.
        let fast = try self.settings(
            "resampler {\n plugin \"soxr\"\n quality \"custom\"\n precision \"28\"\n stopband_begin \"100.5\"\n"
                + " attenuation \"3\"\n}\n")
        guard case .soxrCustom(let recipe) = fast.resampler.plugin else {
            Issue.record("not a custom recipe")
            return
        }
        #expect(recipe.stopbandBegin == 1.005_000_000_000_000_1)
        #expect(recipe.stopbandBegin != 1.005)
        #expect(recipe.scale == 0.501_187_233_627_272_24)
        #expect(recipe.passbandEnd == 0.950_000_000_000_000_07)
    }

    @Test(arguments: [
        ("", "soxr converter invalid precision : 4 [16|20|24|28|32]", 2),
        ("precision \"-3\"", "soxr converter invalid precision : -3 [16|20|24|28|32]", 2),
        ("precision \"24x\"", "Not a valid number in line 5", 5),
        ("precision \"24\"\n phase_response \"-1\"", "soxr converter invalid phase_respons : -1 (0-100)", 2),
        ("precision \"24\"\n passband_end \" 95x\"", "soxr converter passband_end value not a number:  95x", 2),
        ("precision \"24\"\n passband_end \"100.5\"", "soxr converter invalid passband_end : 100.5 (1-100%)", 2),
        ("precision \"24\"\n stopband_begin \"99.9\"", "soxr converter invalid stopband_begin : 99.9 (100-150%)", 2),
        ("precision \"24\"\n attenuation \"30.1\"", "soxr converter invalid attenuation : 30.1 (0-30dB))", 2),
        ("precision \"24\"\n flags \"1.0\"\n attenuation \"31\"", "Not a valid number in line 6", 6),
        ("precision \"24\"\n threads \"x\"", "Not a valid number in line 6", 6),
    ])
    func refusesABadCustomRecipeAsMpd(_ keys: String, _ message: String, _ line: Int) throws {
        let error = try self.failure("resampler {\n plugin \"soxr\"\n quality \"custom\"\n \(keys)\n}")
        #expect(error.message == message)
        #expect(error.location == ConfigLocation(file: Self.path, line: line))
    }

    @Test func refusesResamplerSettingsAsMpd() throws {
        try self.expectFailure(
            "resampler {\n plugin \"soxr\"\n}\nsamplerate_converter \"soxr\"",
            "Cannot use both 'resampler' (line 2) and 'samplerate_converter' (line 5)")
        try self.expectFailure("resampler {\n plugin \"foo\"\n}", "No such resampler plugin: foo")
        try self.expectFailure(
            "resampler {\n plugin \"soxr\"\n quality \"bogus\"\n}", "unknown quality setting 'bogus' in line 2")
        try self.expectFailure("resampler {\n quality \"high\"\n}", "'plugin' missing in line 2")
        try self.expectFailure("samplerate_converter \"soxr bogus\"", "unknown quality setting 'bogus' in line 2")
    }

    @Test func readsTheUserAndGroup() throws {
        let settings = try self.settings("user \"root\"\ngroup \"audio\"\ndb_file \"~/db\"\n")
        #expect(settings.user == "root" && settings.group == "audio")
        // As mpd: `~` is the configured user's home, not the HOME of whoever started the server.
        #expect(settings.dbFile == "/root/db")
        #expect(try self.settings("db_file \"~/db\"\n").dbFile == "/home/listener/db")
        #expect(try self.settings("").user == nil)
    }

    @Test func readsTheFilesystemCharset() throws {
        // Any name is taken here; the server opens it with ICU at startup and refuses what ICU does not know.
        for name in ["UTF-8", "ISO-8859-1", "no-such-charset"] {
            let settings = try self.settings("port \"6600\"\nfilesystem_charset \"\(name)\"\n")
            #expect(settings.filesystemCharset == name)
            #expect(settings.warnings.isEmpty)
        }
        #expect(try self.settings("").filesystemCharset == nil)
    }

    @Test(arguments: [
        ("4M", 4 << 20), ("512k", 512 << 10), ("2048", 2048 << 10), ("1MB", 1 << 20), ("4 MB", 4 << 20),
        ("64k", 128 << 10),
    ])
    func readsTheAudioBufferSizeAsMpdsParseSize(value: String, bytes: Int) throws {
        #expect(try self.settings("audio_buffer_size \"\(value)\"\n").audioBufferSize == bytes)
    }

    @Test func readsPlaybackOptions() throws {
        let settings = try self.settings(
            "audio_buffer_size \"64\"\nreplaygain \"auto\"\nreplaygain_preamp \"-3.5\"\nreplaygain_limit \"no\"\n")
        #expect(settings.audioBufferSize == 128 * 1024, "raised to mpd's minimum")
        #expect(
            settings.reports == [
                ConfigReport(
                    moment: .start, domain: "config", severity: .warning,
                    text: "buffer size 65536 is too small, using 131072 bytes instead")
            ])
        #expect(settings.replayGainMode == "auto")
        #expect(settings.replayGainPreamp == -3.5)
        #expect(settings.replayGainMissingPreamp == 0)
        #expect(!settings.replayGainLimit)
    }

    @Test(arguments: [
        ("replaygain \"loud\"", "Unrecognized replay gain mode"),
        ("replaygain_preamp \"16\"", "Number must be between -15 and 15"),
        ("replaygain_missing_preamp \"x\"", "Not a numeric value"),
        ("audio_buffer_size \"200000\"", "buffer size \"204800000\" is too big"),
        ("audio_buffer_size \"2G\"", "buffer size \"2147483648\" is too big"),
        ("audio_buffer_size \"-1\"", "buffer size \"18446744073709550592\" is too big"),
        ("audio_buffer_size \"0\"", "buffer size \"0\" is not a positive integer"),
        ("audio_buffer_size \"x\"", ":1: Failed to parse integer"),
        ("audio_buffer_size \"4 kiB\"", ":1: Unknown size suffix"),
        ("audio_buffer_size \"99999999999999999999k\"", ":1: Value too large"),
    ])
    func rejectsBadPlaybackOptions(line: String, message: String) {
        #expect(throws: (any Error).self) { try self.settings(line + "\n") }
        do {
            _ = try self.settings(line + "\n")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }
}
