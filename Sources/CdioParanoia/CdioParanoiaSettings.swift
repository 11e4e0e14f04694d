// SPDX-License-Identifier: GPL-3.0-or-later

import CCdioParanoia
import Configuration

/// The cdio_paranoia input plugin's settings (`input { plugin "cdio_paranoia" … }`), as `mpd` 0.23.12 reads
/// them: `default_byte_order` (`little_endian` or `big_endian`: what a drive that does not say returns), `speed`
/// (a number of zero or more; 0 leaves the drive's speed), `mode` (`disable`, `overlap`, `full`; default full
/// without never-skip) and `skip` (a boolean: whether failed reads may be skipped). Pure value; any thread.
public struct CdioParanoiaSettings: Hashable, Sendable {
    /// Samples of a drive that does not tell its byte order are big-endian (the other order than this host's).
    public var defaultReverseEndian = false
    /// The read speed asked of the drive, or 0.
    public var speed = 0
    /// libcdio-paranoia's mode flags.
    public var modeFlags = Int32(PARANOIA_MODE_FULL.rawValue ^ PARANOIA_MODE_NEVERSKIP.rawValue)

    /// The defaults.
    public init() {}

    /// The settings from the configuration's `input` blocks.
    ///
    /// - Returns: the settings and the lines of the block nothing read, or `nil` when the block says `enabled "no"`.
    /// - Throws: `ConfigError` for a bad `enabled`, and, nested in `Failed to initialize input plugin
    ///   'cdio_paranoia'`, for a bad setting (`Unrecognized 'default_byte_order' setting: x`, `Error in setting
    ///   "mode" on line N; Invalid paranoia mode`).
    public static func configured(_ blocks: InputBlocks) throws(ConfigError) -> (
        settings: CdioParanoiaSettings, unread: [ConfigParameter]
    )? {
        guard var block = try blocks.settings(forPlugin: "cdio_paranoia") else { return nil }
        var settings = CdioParanoiaSettings()
        let location = block.block?.location ?? ConfigLocation(file: "", line: 0)
        func failure(_ message: String) -> ConfigError {
            ConfigError(location: location, message: "Failed to initialize input plugin 'cdio_paranoia'; \(message)")
        }
        do throws(ConfigError) {
            switch block.string("default_byte_order") {
            case nil, "little_endian": break
            case "big_endian": settings.defaultReverseEndian = true
            case let value?: throw failure("Unrecognized 'default_byte_order' setting: \(value)")
            }
            settings.speed = try block.unsigned("speed") ?? 0
            switch block.string("mode") {
            case nil: break
            case "disable": settings.modeFlags = Int32(PARANOIA_MODE_DISABLE.rawValue)
            case "overlap": settings.modeFlags = Int32(PARANOIA_MODE_OVERLAP.rawValue)
            case "full": settings.modeFlags = Int32(PARANOIA_MODE_FULL.rawValue)
            default:
                // Read in mpd's `With`, which names the setting and its line.
                let mode = block.block?.parameter(named: "mode")
                var error = failure(
                    "Error in setting \"mode\" on line \(mode?.line ?? 0); Invalid paranoia mode")
                error.location = mode?.location ?? location
                throw error
            }
            if let skip = try block.bool("skip") {
                let neverSkip = Int32(PARANOIA_MODE_NEVERSKIP.rawValue)
                settings.modeFlags = skip ? settings.modeFlags & ~neverSkip : settings.modeFlags | neverSkip
            }
        } catch {
            if error.message.hasPrefix("Failed to initialize") { throw error }
            throw failure(error.message)
        }
        return (settings, block.unread)
    }
}
