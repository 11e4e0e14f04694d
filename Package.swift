// swift-tools-version:6.1
import PackageDescription

/// One list of settings for every Swift target.
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// libpipewire's and SPA's include directories, for the clang importer of CPipeWire (see the CPipeWire target).
let pipeWireHeaders: [SwiftSetting] = [
    .unsafeFlags(["-Xcc", "-I/usr/include/pipewire-0.3", "-Xcc", "-I/usr/include/spa-0.2"])
]

let package = Package(
    name: "fermata",
    products: [.executable(name: "fermata", targets: ["fermata"])],
    targets: [
        // C modules: a module map and a one-line shim header each; imported by exactly one Swift target.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CMPG123", path: "Sources/CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        .systemLibrary(name: "CMad", path: "Sources/CMad", pkgConfig: "mad", providers: [.apt(["libmad0-dev"])]),
        .systemLibrary(name: "CFLAC", path: "Sources/CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(
            name: "CID3Tag", path: "Sources/CID3Tag", pkgConfig: "id3tag", providers: [.apt(["libid3tag0-dev"])]),
        // No pkgConfig: avahi-client's only cflag is -D_REENTRANT, which SwiftPM rejects with a warning; the
        // headers are in /usr/include and the module map links the libraries.
        .systemLibrary(name: "CAvahi", path: "Sources/CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(
            name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        .systemLibrary(
            name: "CPCRE2", path: "Sources/CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),

        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),

        // libcurl-gnutls, as Debian's mpd links it (libcurl4-gnutls-dev's headers). The headers only (no pkgConfig,
        // whose `--libs` would link the library and its GnuTLS, Kerberos, LDAP… libraries): the Curl module loads it
        // with dlopen on first use. The shim adds typed wrappers of the variadic curl_easy_setopt/curl_easy_getinfo,
        // which Swift cannot call.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-gnutls-dev"])]),

        .systemLibrary(
            name: "CICU", path: "Sources/CICU", pkgConfig: "icu-i18n", providers: [.apt(["libicu-dev"])]),

        // FFmpeg's headers only (in the multiarch include directory, /usr/include/x86_64-linux-gnu, which the
        // compiler searches): no pkgConfig, whose `--libs` would link the libraries. The FFmpeg module loads
        // them with dlopen on first use and closes them when idle.
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/CFFmpeg",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),

        .systemLibrary(
            name: "CSndfile", path: "Sources/CSndfile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(
            name: "CWavPack", path: "Sources/CWavPack", pkgConfig: "wavpack", providers: [.apt(["libwavpack-dev"])]),

        // The header only (no pkgConfig, whose `--libs` would link the library and the OpenMP runtime it needs): the
        // Soxr module loads it with dlopen on the first resampling with it.
        .systemLibrary(name: "CSoxr", path: "Sources/CSoxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(
            name: "CSamplerate", path: "Sources/CSamplerate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        // Acoustic fingerprints (`getfingerprint`), as Debian's mpd computes them. The header only (no pkgConfig,
        // whose `--libs` would link the library and the libavcodec it needs): the Chromaprint module loads it with
        // dlopen on the first fingerprint.
        .systemLibrary(
            name: "CChromaprint", path: "Sources/CChromaprint", providers: [.apt(["libchromaprint-dev"])]),

        // SMB/CIFS shares (`smb://` storage and input, as Debian's mpd has them). The header only (no pkgConfig,
        // whose `--libs` would link the library and its ~80 Samba libraries): the SMBClient module loads it with
        // dlopen on the first SMB context.
        .systemLibrary(
            name: "CSMBClient", path: "Sources/CSMBClient", providers: [.apt(["libsmbclient-dev"])]),

        // NFS exports (`nfs://` input, as Debian's mpd has it).
        .systemLibrary(
            name: "CNFS", path: "Sources/CNFS", pkgConfig: "libnfs", providers: [.apt(["libnfs-dev"])]),

        // The D-Bus system bus (`udisks://` storage, as Debian's mpd has it, through UDisks2).
        .systemLibrary(
            name: "CDBus", path: "Sources/CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),

        // Audio CDs (`cdda://` input, as Debian's mpd has it): libcdio-paranoia with libcdio_cdda and libcdio.
        .systemLibrary(
            name: "CCdioParanoia", path: "Sources/CCdioParanoia", pkgConfig: "libcdio_paranoia",
            providers: [.apt(["libcdio-paranoia-dev"])]),

        // No pkgConfig: Debian's libmpcdec-dev has no .pc file; its headers are in /usr/include/mpc and the module
        // map links the library.
        .systemLibrary(name: "CMPCDec", path: "Sources/CMPCDec", providers: [.apt(["libmpcdec-dev"])]),
        .systemLibrary(
            name: "CFAAD", path: "Sources/CFAAD", pkgConfig: "faad2", providers: [.apt(["libfaad-dev"])]),
        // Ogg, Vorbis and Opus: all three imported only by the `Ogg` wrapper (libvorbis's API takes libogg's
        // packets, so one Swift module owns both).
        .systemLibrary(name: "COgg", path: "Sources/COgg", pkgConfig: "ogg", providers: [.apt(["libogg-dev"])]),
        .systemLibrary(
            name: "CVorbis", path: "Sources/CVorbis", pkgConfig: "vorbis", providers: [.apt(["libvorbis-dev"])]),
        .systemLibrary(name: "COpus", path: "Sources/COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        // No pkgConfig: Debian's libmp3lame-dev has no .pc file; the header is in /usr/include/lame.
        .systemLibrary(name: "CLame", path: "Sources/CLame", providers: [.apt(["libmp3lame-dev"])]),
        // The header only (in /usr/include/shout; no pkgConfig, whose `--libs` would link the library): the Shout
        // module loads it with dlopen when a shout output is first enabled.
        .systemLibrary(name: "CShout", path: "Sources/CShout", providers: [.apt(["libshout-dev"])]),
        // The headers only (no pkgConfig, whose `--libs` would link libpulse and its libraries: libsndfile, D-Bus,
        // X11…): the Pulse module loads it with dlopen when a pulse output is first enabled.
        .systemLibrary(name: "CPulse", path: "Sources/CPulse", providers: [.apt(["libpulse-dev"])]),
        // The headers only (no pkgConfig: libpipewire-0.3.pc's cflags carry -D_REENTRANT, which SwiftPM refuses with
        // a warning, and its `--libs` would link the library): the PipeWire module adds the include directories and
        // loads libpipewire with dlopen when a pipewire output is first enabled.
        .systemLibrary(
            name: "CPipeWire", path: "Sources/CPipeWire", providers: [.apt(["libpipewire-0.3-dev", "libspa-0.2-dev"])]),
        // The headers only (no pkgConfig, whose `--libs` would link libjack): the Jack module loads it with dlopen when a
        // jack output is first enabled. JACK1's libjack-dev (the -dev package other -dev packages accept); the soname
        // is JACK2's too.
        .systemLibrary(name: "CJack", path: "Sources/CJack", providers: [.apt(["libjack-dev"])]),
        // The header only (no pkgConfig: sndio.pc's `--libs` would link libsndio): the Sndio module loads it with
        // dlopen when a sndio output is first enabled.
        // The kernel's OSS interface (<sys/soundcard.h>): non-variadic wrappers of its ioctls, no library.
        .systemLibrary(name: "COSS", path: "Sources/COSS", providers: [.apt(["linux-libc-dev"])]),
        .systemLibrary(name: "CSndio", path: "Sources/CSndio", providers: [.apt(["libsndio-dev"])]),
        // The header only (in /usr/include/ao): the AO module loads libao with dlopen when the configuration first
        // names an ao output.
        .systemLibrary(name: "CAO", path: "Sources/CAO", providers: [.apt(["libao-dev"])]),
        // The headers only (in /usr/include/AL): the OpenAL module loads libopenal with dlopen when an openal output is
        // first enabled.
        .systemLibrary(name: "COpenAL", path: "Sources/COpenAL", providers: [.apt(["libopenal-dev"])]),
        // expat: the XML playlist plugins (xspf, asx, rss), as mpd's.
        .systemLibrary(
            name: "CExpat", path: "Sources/CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The header only (no pkgConfig, whose `--libs` would link the library): the GME module loads it with dlopen on
        // the first file it reads.
        .systemLibrary(name: "CGME", path: "Sources/CGME", providers: [.apt(["libgme-dev"])]),
        // The header only (no pkgConfig, whose `--libs` would link the library and libvorbisfile): the OpenMPT module
        // loads it with dlopen on the first module file it reads.
        .systemLibrary(name: "COpenMPT", path: "Sources/COpenMPT", providers: [.apt(["libopenmpt-dev"])]),
        // The header only (no pkgConfig, whose `--libs` would link the library): the ModPlug module loads it with
        // dlopen on the first module file it reads.
        .systemLibrary(name: "CModPlug", path: "Sources/CModPlug", providers: [.apt(["libmodplug-dev"])]),
        // The header only (no pkgConfig, whose `--libs` would link the library and its 55 libraries: SDL2,
        // PulseAudio, sndio…): the MikMod module loads it with dlopen on first use.
        .systemLibrary(name: "CMikMod", path: "Sources/CMikMod", providers: [.apt(["libmikmod-dev"])]),
        // The header only (no pkgConfig, whose `--libs` would link the library and its 64 libraries: SDL2, GLib,
        // PulseAudio, JACK…): the FluidSynth module loads it with dlopen on first use.
        .systemLibrary(name: "CFluidSynth", path: "Sources/CFluidSynth", providers: [.apt(["libfluidsynth-dev"])]),
        // No pkgConfig: Debian's libwildmidi-dev has no .pc file; the header is in /usr/include.
        .systemLibrary(name: "CWildMidi", path: "Sources/CWildMidi", providers: [.apt(["libwildmidi-dev"])]),
        // libsidplayfp and libadplug have C++ APIs only. Each gets a small C++ target of `extern "C"` functions
        // over opaque handles (`CSidplayShim`, `CAdPlugShim`: the only includers of the library's headers), so
        // no Swift target needs C++ interop. The system library targets (module maps without headers) carry
        // the pkg-config include and link flags to the shims that depend on them.
        .systemLibrary(
            name: "CSidplayFP", path: "Sources/CSidplayFP", pkgConfig: "libsidplayfp",
            providers: [.apt(["libsidplayfp-dev"])]),
        // CICU: the shim converts the tunes' Windows-1252 texts with ICU's converter, as mpd does.
        .target(name: "CSidplayShim", dependencies: ["CSidplayFP", "CICU"]),
        // adplug.pc names libbinio's include directory and both libraries.
        .systemLibrary(
            name: "CAdPlugLib", path: "Sources/CAdPlugLib", pkgConfig: "adplug", providers: [.apt(["libadplug-dev"])]),
        .target(name: "CAdPlugShim", dependencies: ["CAdPlugLib"]),

        // ICU collation, which Debian's mpd uses to order directories, songs and sorted results, and ICU's
        // converters (`#charset=` streams, `filesystem_charset` file names). (Case
        // folding for search is Model's FilterCaseFold: a table taken from ICU 72 plus mpd's buffer quirk.)
        // The shim names no ICU type (ICUShim.h says why), so no Swift module ever loads ICU's headers next to
        // Foundation's own copy of ICU.
        .target(name: "CICUShim", dependencies: ["CICU"]),
        .target(name: "ICU", dependencies: ["CICUShim"], swiftSettings: settings),

        // The sticker database in SQLite with mpd's schema; the only importer of CSQLite.
        .target(name: "Sticker", dependencies: ["CSQLite"], swiftSettings: settings),

        // Lossless text for byte strings that need not be UTF-8 (file names, client arguments), as `mpd` passes
        // them through; no dependencies, so Posix and the pure layers share it.
        .target(name: "RawText", swiftSettings: settings),

        // Shared libraries a C wrapper loads with dlopen on first use instead of linking them (FFmpeg's,
        // libchromaprint, libsmbclient): loading, the use count, closing when idle, the failure reported once. No C
        // module.
        .target(name: "DynamicLibrary", swiftSettings: settings),

        // Pure, I/O-free layers.
        .target(name: "Model", swiftSettings: settings),
        .target(name: "MPDProtocol", dependencies: ["Model", "RawText"], swiftSettings: settings),

        // Regular expressions for `=~` filters, through libpcre2 as mpd does; the only importer of CPCRE2. It
        // implements Model's `FilterRegularExpression`, which Server hands the filter parser.
        .target(name: "PCRE", dependencies: ["CPCRE2", "Model"], swiftSettings: settings),

        // Thin typed wrappers over Linux syscalls; the only importer of CLinux. RawText for the names the kernel
        // returns, and `FileSystemCharset` (`filesystem_charset`), the one way a path reaches the kernel.
        .target(name: "Posix", dependencies: ["CLinux", "RawText"], swiftSettings: settings),

        // The input streams decoders and tag readers read through (mpd's input plugins): local files, memory, and
        // the ICY metadata parser of HTTP streams. Model for the tags streams carry.
        .target(name: "Input", dependencies: ["Posix", "Model"], swiftSettings: settings),
        // http(s) input streams through libcurl (mpd's curl input plugin) with ICY metadata, and the
        // `input { plugin "curl" }` settings; WebDAV PROPFIND (mpd's curl storage plugin), its multistatus body
        // parsed by Expat; the only importer of CCurl. ICU for `#charset=` stream URLs.
        .target(
            name: "Curl",
            dependencies: ["CCurl", "DynamicLibrary", "Input", "Model", "Posix", "Configuration", "ICU", "Expat"],
            swiftSettings: settings),

        // C library wrappers: each the only importer of its C module.
        .target(name: "MPG123", dependencies: ["CMPG123", "Input", "Model", "Posix"], swiftSettings: settings),
        // MPEG audio decoding through libmad, stepped as mpd's mad plugin steps it; the only importer of CMad.
        .target(name: "Mad", dependencies: ["CMad", "Input"], swiftSettings: settings),
        .target(name: "ID3Tag", dependencies: ["CID3Tag", "Model", "Posix"], swiftSettings: settings),
        .target(name: "FLAC", dependencies: ["CFLAC", "Input"], swiftSettings: settings),
        // libavformat/libavcodec demuxing and decoding over an InputStream; the only importer of CFFmpeg.
        .target(name: "FFmpeg", dependencies: ["CFFmpeg", "Input", "DynamicLibrary"], swiftSettings: settings),
        // Musepack through libmpcdec and raw AAC (ADTS, ADIF) through libfaad, as mpd's mpcdec and faad plugins.
        .target(name: "MPCDec", dependencies: ["CMPCDec", "Input"], swiftSettings: settings),
        .target(name: "FAAD", dependencies: ["CFAAD", "Input"], swiftSettings: settings),
        // The Ogg demuxer (libogg) with the Vorbis (libvorbis synthesis) and Opus (libopus) decoders, and the
        // Ogg Vorbis (libvorbisenc) and Ogg Opus encoders.
        .target(name: "Ogg", dependencies: ["COgg", "CVorbis", "COpus", "Input"], swiftSettings: settings),
        // MP3 encoding through libmp3lame; the only importer of CLame.
        .target(name: "Lame", dependencies: ["CLame"], swiftSettings: settings),
        // Encoder plugins (mpd's lame, vorbis, opus, flac, wave) behind one interface, and their registry.
        .target(name: "Encoders", dependencies: ["Model", "Lame", "Ogg", "FLAC"], swiftSettings: settings),
        // libsndfile (WAV, AIFF, AU…) and libwavpack readers over an InputStream, as mpd's sndfile and wavpack plugins.
        .target(name: "Sndfile", dependencies: ["CSndfile", "Input"], swiftSettings: settings),
        .target(name: "WavPack", dependencies: ["CWavPack", "Input"], swiftSettings: settings),
        // gzip streams through zlib (mpd's compressed database file, `.vgz` chiptunes); the only importer of CZlib.
        .target(name: "Zlib", dependencies: ["CZlib"], swiftSettings: settings),
        // Video game music emulation through libgme; the only importer of CGME (Zlib inflates `.vgz` files before
        // libgme checks them).
        .target(name: "GME", dependencies: ["CGME", "DynamicLibrary", "Zlib"], swiftSettings: settings),
        // Tracker module rendering through libopenmpt; the only importer of COpenMPT.
        .target(name: "OpenMPT", dependencies: ["COpenMPT", "DynamicLibrary"], swiftSettings: settings),
        // Tracker module rendering through libmodplug; the only importer of CModPlug.
        .target(name: "ModPlug", dependencies: ["CModPlug", "DynamicLibrary"], swiftSettings: settings),
        // Tracker module rendering through libmikmod's software mixer; the only importer of CMikMod.
        .target(name: "MikMod", dependencies: ["CMikMod", "DynamicLibrary"], swiftSettings: settings),
        // MIDI synthesis through libfluidsynth's player and synthesizer; the only importer of CFluidSynth.
        .target(name: "FluidSynth", dependencies: ["CFluidSynth", "DynamicLibrary"], swiftSettings: settings),
        // MIDI synthesis from GUS patches through libwildmidi; the only importer of CWildMidi.
        .target(name: "WildMidi", dependencies: ["CWildMidi"], swiftSettings: settings),
        // C64 SID emulation through libsidplayfp (ReSIDfp); the only importer of CSidplayShim.
        .target(name: "Sidplay", dependencies: ["CSidplayShim"], swiftSettings: settings),
        // AdLib (OPL) music through AdPlug; the only importer of CAdPlugShim.
        .target(name: "AdPlug", dependencies: ["CAdPlugShim"], swiftSettings: settings),

        // Sample-rate conversion through libsoxr (as mpd's soxr resampler); the only importer of CSoxr.
        .target(name: "Soxr", dependencies: ["CSoxr", "DynamicLibrary"], swiftSettings: settings),
        // Sample-rate conversion through libsamplerate (mpd's libsamplerate resampler, Debian's default); the only
        // importer of CSamplerate.
        .target(name: "Samplerate", dependencies: ["CSamplerate"], swiftSettings: settings),
        // Acoustic fingerprints through libchromaprint, loaded on the first one; the only importer of CChromaprint.
        .target(name: "Chromaprint", dependencies: ["CChromaprint", "DynamicLibrary"], swiftSettings: settings),

        // Format plugins: tag/info readers for the library and decoders for playback, one folder per plugin.
        .target(
            name: "Formats",
            dependencies: [
                "Input", "Mad", "MPG123", "ID3Tag", "Ogg", "FLAC", "Sndfile", "WavPack", "FFmpeg", "MPCDec", "FAAD",
                "GME", "OpenMPT", "ModPlug", "MikMod", "WildMidi", "FluidSynth", "Sidplay", "AdPlug", "Model",
                "Configuration", "Posix", "RawText",
            ],
            swiftSettings: settings),

        // XML parsing through libexpat, as mpd's ExpatParser; the only importer of CExpat.
        .target(name: "Expat", dependencies: ["CExpat"], swiftSettings: settings),
        // Playlist plugins (mpd's m3u, extm3u, pls, xspf, asx, rss, cue): pure parsers, bytes in, entries out,
        // and their registry in mpd's order.
        .target(
            name: "Playlists", dependencies: ["Model", "Expat", "RawText", "Configuration"], swiftSettings: settings),

        // The epoll event loop: descriptors, timers and tasks posted from other threads, run on one thread.
        .target(name: "EventLoop", dependencies: ["Posix"], swiftSettings: settings),
        // Listeners and buffered connections on the event loop, and `bind_to_address` parsing; the stream outputs'
        // (httpd, snapcast) servers: the ring they read, their thread and its listeners and clients (Model: the log).
        .target(name: "Network", dependencies: ["EventLoop", "Posix", "Model"], swiftSettings: settings),

        // The music library: scanner, update jobs, the immutable index snapshot, the database files, and the
        // service a daemon runs over them (the update queue, the `auto_update` watcher), which reports to the server
        // through a callback. EventLoop for the watcher's descriptor and timer and the jobs' results.
        .target(
            name: "Library", dependencies: ["Model", "Posix", "ICU", "Zlib", "RawText", "EventLoop"],
            swiftSettings: settings),

        // Stored playlists: the .m3u files of playlist_directory, read and written as mpd does, atomically.
        .target(name: "StoredPlaylists", dependencies: ["Model", "Posix", "RawText"], swiftSettings: settings),

        // The queue, the playlist logic and the player: decoder thread, PCM pipe, output threads, mixers, and
        // the outputs that need no C library (null, fifo, pipe, httpd). ALSA lives in its own module. EventLoop
        // for the player's reports to the loop thread; Network for the httpd output's listeners and connections,
        // served on a loop of its own.
        .target(
            name: "Playback",
            dependencies: [
                "Model", "Formats", "Input", "Posix", "EventLoop", "Soxr", "Samplerate", "Encoders", "Chromaprint",
            ],
            swiftSettings: settings),

        // The ALSA output and hardware mixer, and the alsa input plugin (`alsa://`, capture); the only importer of
        // CALSA.
        .target(
            name: "ALSA", dependencies: ["CALSA", "Playback", "Model", "Posix", "Input", "Configuration"],
            swiftSettings: settings),
        // The httpd output: a stream server of its own for listeners (phones, browsers), any encoder.
        .target(
            name: "Httpd", dependencies: ["Playback", "Encoders", "Network", "EventLoop", "Model", "Posix"],
            swiftSettings: settings),
        // The snapcast output: a Snapcast server of its own for snapclients, as mpd 0.23's.
        .target(
            name: "Snapcast", dependencies: ["Playback", "Encoders", "Network", "EventLoop", "Model", "Posix"],
            swiftSettings: settings),
        // The shout output (Icecast, SHOUTcast) through libshout; the only importer of CShout.
        .target(
            name: "Shout", dependencies: ["CShout", "DynamicLibrary", "Playback", "Encoders", "Model", "Posix"],
            swiftSettings: settings),
        // The pulse output and its mixer (a PulseAudio or pipewire-pulse server) through libpulse's threaded
        // main loop; the only importer of CPulse.
        .target(
            name: "Pulse", dependencies: ["CPulse", "DynamicLibrary", "Playback", "Model"],
            swiftSettings: settings),
        // The pipewire output and its mixer through libpipewire's thread loop; the only importer of CPipeWire.
        .target(
            name: "PipeWire", dependencies: ["CPipeWire", "DynamicLibrary", "Playback", "Recorder", "Model"],
            swiftSettings: settings + pipeWireHeaders),
        // The recorder output: the encoded stream to a file (`path`, or a tag template's `format_path`).
        .target(
            name: "Recorder", dependencies: ["Playback", "Encoders", "Model", "Posix"], swiftSettings: settings),
        // The ao output through libao's live drivers; the only importer of CAO.
        .target(
            name: "AO", dependencies: ["CAO", "DynamicLibrary", "Playback", "Model", "Posix"], swiftSettings: settings),
        // The jack output through a JACK server's client; the only importer of CJack.
        .target(
            name: "Jack", dependencies: ["CJack", "DynamicLibrary", "Playback", "Model"], swiftSettings: settings),
        // The sndio output and its mixer through libsndio (a sndiod server or a raw device); the only importer of
        // CSndio.
        .target(
            name: "Sndio", dependencies: ["CSndio", "DynamicLibrary", "Playback", "Model"], swiftSettings: settings),
        // The oss output and its mixer on OSS device nodes (open, ioctl, write); the only importer of COSS.
        .target(name: "OSS", dependencies: ["COSS", "Playback", "Model"], swiftSettings: settings),
        // The openal output through an OpenAL device; the only importer of COpenAL.
        .target(
            name: "OpenAL", dependencies: ["COpenAL", "DynamicLibrary", "Playback", "Model"], swiftSettings: settings),
        // DNS-SD announcement of `_mpd._tcp` through avahi-daemon; the only importer of CAvahi.
        .target(name: "Zeroconf", dependencies: ["CAvahi", "Model", "Posix"], swiftSettings: settings),

        // SMB/CIFS shares through libsmbclient (mpd's smbclient storage, input and neighbor plugins); the only
        // importer of CSMBClient.
        .target(
            name: "SMBClient", dependencies: ["CSMBClient", "DynamicLibrary", "Input", "Model", "Posix"],
            swiftSettings: settings),
        // Method calls and signals on the D-Bus system bus through libdbus, and UDisks2's managed objects (mpd's
        // udisks storage and neighbor plugins); the only importer of CDBus.
        .target(name: "DBus", dependencies: ["CDBus", "Model"], swiftSettings: settings),
        // Audio CD tracks through libcdio-paranoia (mpd's cdio_paranoia input plugin); the only importer of
        // CCdioParanoia.
        .target(
            name: "CdioParanoia", dependencies: ["CCdioParanoia", "Input", "Model", "Configuration"],
            swiftSettings: settings),
        // Files on NFS exports through libnfs (mpd's nfs input plugin); the only importer of CNFS.
        .target(name: "NFS", dependencies: ["CNFS", "Input", "Model"], swiftSettings: settings),

        // The start-up notice to systemd (sd_notify READY=1, for Type=notify units); the only importer of CSystemd.
        .target(name: "Systemd", dependencies: ["CSystemd"], swiftSettings: settings),

        // mpd.conf syntax and typed settings; Posix for reading the files and looking up home directories.
        .target(name: "Configuration", dependencies: ["Model", "Posix"], swiftSettings: settings),

        // Client sessions, the command table, command handlers, idle fan-out.
        .target(
            name: "Server",
            dependencies: [
                "MPDProtocol", "Model", "EventLoop", "Network", "Posix", "Configuration", "Library", "Sticker",
                "StoredPlaylists", "Playback", "Playlists", "Input", "RawText", "PCRE",
            ],
            swiftSettings: settings),

        // Composition root: CLI, config loading, wiring, signals.
        .executableTarget(
            name: "fermata",
            dependencies: [
                "Server", "Configuration", "EventLoop", "Network", "Posix", "Library", "Formats", "Model", "Playback",
                "ALSA", "Httpd", "Snapcast", "Shout", "Pulse", "PipeWire", "Recorder", "AO", "OpenAL", "Jack", "Sndio",
                "OSS", "StoredPlaylists",
                "Zeroconf", "Curl",
                "Input",
                "Systemd", "Soxr",
                "Samplerate",
                "Playlists", "ICU", "FFmpeg", "SMBClient", "NFS", "CdioParanoia", "DBus",
            ], swiftSettings: settings),

        // Test support is a real target: loopback client, temporary directories.
        .target(
            name: "TestSupport", dependencies: ["Posix", "Library", "Model", "EventLoop", "Playback", "RawText"],
            path: "Tests/TestSupport", swiftSettings: settings),
        // Files made once per test process with Debian's tools (sox, flac, lame…); Glibc only, no Foundation.
        .target(name: "TestTools", dependencies: ["Posix"], path: "Tests/TestTools", swiftSettings: settings),
        .testTarget(name: "ICUTests", dependencies: ["ICU", "Model", "Posix"], swiftSettings: settings),
        .testTarget(name: "PCRETests", dependencies: ["PCRE", "Model"], swiftSettings: settings),
        .testTarget(name: "StickerTests", dependencies: ["Sticker", "TestSupport"], swiftSettings: settings),
        .testTarget(
            name: "StoredPlaylistsTests",
            dependencies: ["StoredPlaylists", "Model", "Posix", "RawText", "TestSupport"],
            swiftSettings: settings),
        .testTarget(
            name: "PlaylistsTests", dependencies: ["Playlists", "Expat", "Model", "RawText", "Configuration"],
            swiftSettings: settings),
        .testTarget(name: "RawTextTests", dependencies: ["RawText"], swiftSettings: settings),
        // PCRE: the matchers' `=~` cases run on the engine the server uses.
        .testTarget(name: "ModelTests", dependencies: ["Model", "PCRE"], swiftSettings: settings),
        .testTarget(name: "MPDProtocolTests", dependencies: ["MPDProtocol", "Model", "PCRE"], swiftSettings: settings),
        .testTarget(name: "PosixTests", dependencies: ["Posix", "RawText", "TestSupport"], swiftSettings: settings),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "Posix"], swiftSettings: settings),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "EventLoop", "Posix"], swiftSettings: settings),
        .testTarget(name: "InputTests", dependencies: ["Input", "Posix", "Model"], swiftSettings: settings),
        .testTarget(
            name: "CurlTests",
            dependencies: ["Curl", "Input", "Model", "Posix", "Configuration", "Formats", "TestTools", "Expat"],
            swiftSettings: settings),
        .testTarget(
            name: "MPG123Tests", dependencies: ["MPG123", "Input", "TestTools", "Model"], swiftSettings: settings),
        .testTarget(name: "MadTests", dependencies: ["Mad", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "FFmpegTests", dependencies: ["FFmpeg", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "RecorderTests", dependencies: ["Recorder", "Playback", "Encoders", "Model"], swiftSettings: settings),
        .testTarget(name: "PulseTests", dependencies: ["Pulse", "Playback", "Model"], swiftSettings: settings),
        .testTarget(
            name: "PipeWireTests", dependencies: ["PipeWire", "Playback", "Model"],
            swiftSettings: settings + pipeWireHeaders),
        .testTarget(
            name: "ShoutTests", dependencies: ["Shout", "Playback", "Model", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "AOTests", dependencies: ["AO", "Playback", "Model", "Posix", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "JackTests", dependencies: ["Jack", "Playback", "Model", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "SndioTests", dependencies: ["Sndio", "Playback", "Model", "TestTools"], swiftSettings: settings),
        .testTarget(name: "OSSTests", dependencies: ["OSS", "Playback", "Model"], swiftSettings: settings),
        .testTarget(
            name: "OpenALTests", dependencies: ["OpenAL", "Playback", "Model", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "HttpdTests", dependencies: ["Httpd", "Playback", "Encoders", "Model", "Network"],
            swiftSettings: settings),
        .testTarget(
            name: "SnapcastTests",
            dependencies: ["Snapcast", "Playback", "Encoders", "Model", "Network", "Posix", "TestSupport"],
            swiftSettings: settings),
        .testTarget(name: "EncodersTests", dependencies: ["Encoders", "Model"], swiftSettings: settings),
        .testTarget(name: "OggTests", dependencies: ["Ogg", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "SndfileTests", dependencies: ["Sndfile", "Input"], swiftSettings: settings),
        .testTarget(name: "WavPackTests", dependencies: ["WavPack", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "GMETests", dependencies: ["GME"], swiftSettings: settings),
        .testTarget(name: "OpenMPTTests", dependencies: ["OpenMPT"], swiftSettings: settings),
        .testTarget(name: "ModPlugTests", dependencies: ["ModPlug"], swiftSettings: settings),
        .testTarget(name: "MikModTests", dependencies: ["MikMod"], swiftSettings: settings),
        .testTarget(name: "FluidSynthTests", dependencies: ["FluidSynth", "TestTools"], swiftSettings: settings),
        .testTarget(name: "WildMidiTests", dependencies: ["WildMidi"], swiftSettings: settings),
        .testTarget(name: "SidplayTests", dependencies: ["Sidplay"], swiftSettings: settings),
        .testTarget(name: "AdPlugTests", dependencies: ["AdPlug"], swiftSettings: settings),
        .testTarget(name: "SoxrTests", dependencies: ["Soxr"], swiftSettings: settings),
        .testTarget(name: "SamplerateTests", dependencies: ["Samplerate"], swiftSettings: settings),
        .testTarget(name: "ChromaprintTests", dependencies: ["Chromaprint", "TestTools"], swiftSettings: settings),
        .testTarget(
            name: "DynamicLibraryTests", dependencies: ["DynamicLibrary", "TestTools"], swiftSettings: settings),
        // A real smbd on 127.0.0.1, started by the tests.
        .testTarget(
            name: "SMBClientTests", dependencies: ["SMBClient", "Input", "Model", "Posix", "TestTools"],
            swiftSettings: settings),
        .testTarget(
            name: "CdioParanoiaTests", dependencies: ["CdioParanoia", "Input", "Configuration"],
            swiftSettings: settings),
        // UDisks2's reply parsed; the connection's error without a bus.
        .testTarget(name: "DBusTests", dependencies: ["DBus", "Model"], swiftSettings: settings),
        .testTarget(name: "NFSTests", dependencies: ["NFS", "Input", "Posix", "TestTools"], swiftSettings: settings),
        .testTarget(name: "FLACTests", dependencies: ["FLAC", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "MPCDecTests", dependencies: ["MPCDec", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "FAADTests", dependencies: ["FAAD", "Input", "TestTools"], swiftSettings: settings),
        .testTarget(name: "ID3TagTests", dependencies: ["ID3Tag", "Model"], swiftSettings: settings),
        .testTarget(
            name: "FormatsTests",
            dependencies: [
                "Formats", "ID3Tag", "FLAC", "FFmpeg", "Input", "Model", "TestTools", "Configuration", "ModPlug",
                "MPG123",
            ],
            swiftSettings: settings),
        .testTarget(name: "ZlibTests", dependencies: ["Zlib"], swiftSettings: settings),
        // MPDProtocol to parse the query engine's recorded filters as clients send them.
        .testTarget(
            name: "LibraryTests",
            dependencies: [
                "Library", "MPDProtocol", "Model", "PCRE", "Posix", "RawText", "TestSupport", "Zlib", "EventLoop",
            ],
            swiftSettings: settings),
        .testTarget(
            name: "PlaybackTests",
            dependencies: [
                "Playback", "Model", "Formats", "Input", "Posix", "EventLoop", "Soxr", "Samplerate", "TestSupport",
                "TestTools",
            ], swiftSettings: settings),
        .testTarget(
            name: "ALSATests",
            dependencies: ["ALSA", "Playback", "Model", "Posix", "TestSupport", "Input", "Configuration"],
            swiftSettings: settings),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration"], swiftSettings: settings),
        .testTarget(name: "ZeroconfTests", dependencies: ["Zeroconf", "Model", "Posix"], swiftSettings: settings),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Server", "Library", "MPDProtocol", "Model", "EventLoop", "Network", "Playback", "Posix", "TestSupport",
                "Input", "Playlists", "RawText",
            ], swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
