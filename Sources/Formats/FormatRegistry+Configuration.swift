// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import FluidSynth
import GME
import MikMod
import ModPlug
import OpenMPT

/// One of `mpd`'s decoder plugins as Fermata builds it from its `decoder` block: its name and how its
/// initialization reads the block's settings (`mpd`'s `DecoderPlugin::init`).
///
/// A value type; safe from any thread.
public struct DecoderPluginEntry: Sendable {
    /// Builds the plugin from its settings; `nil` when the plugin stays off (`hybrid_dsd` unless enabled).
    public typealias Make = @Sendable (inout DecoderPluginSettings) throws(ConfigError) -> (any FormatPlugin)?

    /// The plugin's name, as `plugin "…"` names it.
    public let name: String
    /// Builds the plugin.
    public let make: Make

    /// An entry.
    ///
    /// - Parameters:
    ///   - name: The plugin's name.
    ///   - make: Reads the plugin's settings and builds it; it reads only the keys `mpd`'s plugin reads (the
    ///     others are warned about) and throws `mpd`'s message for a bad value.
    public init(_ name: String, make: @escaping Make) {
        self.name = name
        self.make = make
    }
}

extension FormatRegistry {
    /// Every format Fermata supports with its default settings, in `mpd` 0.23.12's decoder order: what an
    /// `mpd.conf` without `decoder` blocks gives (see `configured(_:catalogue:)`).
    public static let standard: FormatRegistry = {
        do {
            return try FormatRegistry.configured(.none).registry
        } catch {
            // Only a block's value can be wrong, and there is none.
            preconditionFailure("the default decoder settings failed: \(error)")
        }
    }()

    /// Every decoder plugin Fermata has, in `mpd` 0.23.12's order, each with the settings of its `decoder`
    /// block that Fermata honours. Wiring a plugin's settings is done here and only here: read them from the
    /// `DecoderPluginSettings` (`try settings.bool("loop") ?? false`) into the plugin's options.
    public static let catalogue: [DecoderPluginEntry] = [
        DecoderPluginEntry("mad") { _ in MP3Format() },
        DecoderPluginEntry("mpg123") { _ in MP3Format(scan: .mpg123) },
        DecoderPluginEntry("vorbis") { _ in VorbisFormat() },
        DecoderPluginEntry("oggflac") { _ in OggFLACFormat() },
        DecoderPluginEntry("flac") { _ in FLACFormat() },
        DecoderPluginEntry("opus") { _ in OpusFormat() },
        DecoderPluginEntry("sndfile") { _ in SndfileFormat() },
        DecoderPluginEntry("dsdiff") { (settings) throws(ConfigError) in
            DSDIFFFormat(leastSignificantBitFirst: try settings.bool("lsbitfirst") ?? false)
        },
        DecoderPluginEntry("dsf") { _ in DSFFormat() },
        // Off unless its block has an `enabled` line (`enabled "no"` never gets here).
        DecoderPluginEntry("hybrid_dsd") { settings in settings.contains("enabled") ? HybridDSDFormat() : nil },
        DecoderPluginEntry("faad") { _ in FAADFormat() },
        DecoderPluginEntry("mpcdec") { _ in MusepackFormat() },
        DecoderPluginEntry("wavpack") { _ in WavPackFormat() },
        DecoderPluginEntry("openmpt") { (settings) throws(ConfigError) in
            var options = OpenMPTFormat.Options()
            options.repeatCount = try settings.integer("repeat_count") ?? options.repeatCount
            options.stereoSeparation = try settings.integer("stereo_separation") ?? options.stereoSeparation
            options.interpolationFilter = try settings.integer("interpolation_filter") ?? options.interpolationFilter
            options.overrideMPTMInterpolationFilter =
                try settings.bool("override_mptm_interp_filter") ?? options.overrideMPTMInterpolationFilter
            options.volumeRamping = try settings.integer("volume_ramping") ?? options.volumeRamping
            options.syncSamples = try settings.bool("sync_samples") ?? options.syncSamples
            options.emulateAmiga = try settings.bool("emulate_amiga") ?? options.emulateAmiga
            options.emulateAmigaType = settings.string("emulate_amiga_type") ?? options.emulateAmigaType
            return OpenMPTFormat(options: options)
        },
        DecoderPluginEntry("modplug") { (settings) throws(ConfigError) in
            let mode = settings.string("resampling_mode") ?? "fir"
            let line = settings.block?.line ?? 0
            guard let resampling = ModPlugFile.Resampling(rawValue: mode) else {
                throw settings.error("Invalid resampling mode in line \(line): \(mode)")
            }
            let loops = try settings.integer("loop_count") ?? 0
            guard loops >= -1 else { throw settings.error("Invalid loop count in line \(line): \(loops)") }
            return ModPlugFormat(settings: ModPlugFile.Settings(resampling: resampling, loopCount: loops))
        },
        DecoderPluginEntry("mikmod") { (settings) throws(ConfigError) in
            let rate = try settings.positive("sample_rate") ?? 44100
            // mpd's audio_valid_sample_rate bound.
            guard rate < 1 << 30 else {
                throw settings.error("Invalid sample rate in line \(settings.block?.line ?? 0): \(rate)")
            }
            // libmikmod is loaded and set up on first use; a failure there is logged once and the plugin then
            // declines every file, as mpd leaves out a plugin whose init fails.
            return MikModFormat(options: MikModOptions(loop: try settings.bool("loop") ?? false, sampleRate: rate))
        },
        DecoderPluginEntry("sidplay") { (settings) throws(ConfigError) in
            let options = SidplayOptions(
                songlengthDatabase: try settings.path("songlength_database"),
                defaultSonglength: try settings.positive("default_songlength") ?? 0,
                defaultGenre: settings.string("default_genre") ?? "",
                allFilesAreContainers: try settings.bool("all_files_are_containers") ?? true,
                filter: try settings.bool("filter") ?? true, kernal: try settings.path("kernal"),
                basic: try settings.path("basic"))
            do {
                return try SidplayFormat(options: options)
            } catch {
                // A ROM image or song-length database that cannot be read stops start-up, as in mpd.
                throw settings.error("\(error)")
            }
        },
        DecoderPluginEntry("wildmidi") { (settings) throws(ConfigError) in
            // nil (unavailable, as in mpd) when the configuration file does not exist or libwildmidi refuses it.
            WildMidiFormat(
                options: WildMidiOptions(configFile: try settings.path("config_file") ?? WildMidiOptions().configFile))
        },
        DecoderPluginEntry("fluidsynth") { (settings) throws(ConfigError) in
            let defaults = FluidSynthOptions()
            return FluidSynthFormat(
                options: FluidSynthOptions(
                    sampleRate: try settings.positive("sample_rate") ?? defaults.sampleRate,
                    soundFont: settings.string("soundfont") ?? defaults.soundFont))
        },
        DecoderPluginEntry("adplug") { (settings) throws(ConfigError) in
            let options = AdPlugOptions(sampleRate: try settings.positive("sample_rate") ?? 48000)
            do {
                return try AdPlugFormat(options: options)
            } catch {
                throw settings.error("\(error)")
            }
        },
        DecoderPluginEntry("ffmpeg") { settings in
            // libavformat's own options, passed as text when the block sets them.
            let options = ["probesize", "analyzeduration"].compactMap { key in
                settings.string(key).map { (name: key, value: $0) }
            }
            return FFmpegFormat(formatOptions: options)
        },
        DecoderPluginEntry("gme") { (settings) throws(ConfigError) in
            // mpd multiplies the seconds by 1000 in an unsigned int.
            let fade = try settings.unsigned("default_fade").map { Int(UInt32(truncatingIfNeeded: $0 &* 1000)) }
            return GMEFormat(
                options: GMEFormat.Options(
                    accuracy: try settings.bool("accuracy"), defaultFadeMilliseconds: fade ?? GMEFormat.defaultFade))
        },
        DecoderPluginEntry("pcm") { _ in PCMStreamFormat() },
    ]

    /// The registry a configuration's `decoder` blocks describe, and the lines of them nothing read.
    public struct Configured: Sendable {
        /// The enabled plugins, in `mpd`'s order.
        public var registry: FormatRegistry
        /// The lines of the enabled plugins' blocks they did not read, which `mpd` warns about once started
        /// (`BlockCheck`).
        public var unread: [ConfigParameter]
    }

    /// Builds the plugins of `catalogue` that `decoders` enables, each with its block's settings, as `mpd`'s
    /// `decoder_plugin_init_all` does. Any thread.
    ///
    /// - Parameters:
    ///   - decoders: The configuration's checked `decoder` blocks.
    ///   - catalogue: The plugins to choose from, in priority order.
    /// - Throws: `ConfigError` for a bad `enabled` value (`Error in setting "enabled" on line N; …`), or a bad
    ///   value a plugin reads, as `Failed to initialize decoder plugin 'gme'; Error in setting …`.
    public static func configured(
        _ decoders: DecoderBlocks, catalogue: [DecoderPluginEntry] = FormatRegistry.catalogue
    ) throws(ConfigError) -> Configured {
        var plugins: [any FormatPlugin] = []
        var unread: [ConfigParameter] = []
        for entry in catalogue {
            guard var settings = try decoders.settings(forPlugin: entry.name) else { continue }
            do {
                if let plugin = try entry.make(&settings) { plugins.append(plugin) }
            } catch {
                var wrapped = error
                wrapped.message = "Failed to initialize decoder plugin '\(entry.name)'; \(error.message)"
                throw wrapped
            }
            // As mpd: an unavailable plugin's block was used all the same.
            unread += settings.unread
        }
        return Configured(registry: FormatRegistry(plugins), unread: unread)
    }
}

extension FormatRegistry {
    /// The decoder plugins whose libraries the server loads on first use, not at start-up, so that whether their
    /// initialisation works (`lazyPluginFailures()`) is learnt by a process that only asks.
    public static let lazilyLoaded: Set<String> = ["fluidsynth", "mikmod", "openmpt", "modplug", "gme"]

    /// The plugins of `lazilyLoaded` whose initialisation fails here, with why, as `mpd` leaves such a plugin out:
    /// fluidsynth's when libfluidsynth cannot be loaded (`mpd`'s plugin initialisation checks nothing else, not even
    /// the SoundFont), mikmod's when libmikmod cannot be loaded or set up (`MikMod_Init`, as `mpd`'s initialisation
    /// runs it) at the default rate, openmpt's, modplug's and gme's when libopenmpt, libmodplug or libgme cannot be
    /// loaded. Loads the libraries and reports nothing on standard error: for a process that only asks
    /// (`fermata --plugin-schemes`).
    public static func lazyPluginFailures() -> [(name: String, reason: String)] {
        var failures: [(name: String, reason: String)] = []
        let fluidSynth = FluidSynthLibrary(soname: FluidSynthLibrary.headerSoname, reportFailure: { _ in })
        if let failure = fluidSynth.loadFailure() { failures.append(("fluidsynth", "\(failure)")) }
        if let failure = MikModLibrary.setUpFailure(sampleRate: MikModOptions().sampleRate) {
            failures.append(("mikmod", "\(failure)"))
        }
        if let failure = OpenMPTLibrary(reportFailure: { _ in }).loadFailure() {
            failures.append(("openmpt", "\(failure)"))
        }
        if let failure = ModPlugLibrary(reportFailure: { _ in }).loadFailure() { failures.append(("modplug", failure)) }
        if let failure = GMELibrary(reportFailure: { _ in }).loadFailure() { failures.append(("gme", "\(failure)")) }
        return failures
    }
}
