#!/bin/sh
# Builds the fuzz targets without touching the normal build: the package's library modules are compiled
# with libFuzzer's coverage instrumentation and AddressSanitizer into .build/fuzz, then each target in
# fuzz/targets/ is linked with libFuzzer's main into .build/fuzz/bin/<target>.
# Usage: fuzz/build.sh [target...]   (default: every target)
set -eu
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SWIFTC=${SWIFTC:-swiftc}
BUILD=.build/fuzz
SANITIZE="-sanitize=fuzzer,address"
ALL_TARGETS="protocol filter config icy playlists mpddb id3 mp3 xiph flac dsd ffmpeg mpcfaad ogg pcmfiles trackers synth pcmstream c64opl"
# The targets that read song files through the format plugins, and the modules the Formats module links: every
# format plugin's wrapper module and what they depend on (DynamicLibrary: the loader of FFmpeg, libfluidsynth, libmikmod; add a new one here).
FORMAT_TARGETS="id3 mp3 xiph flac dsd ffmpeg mpcfaad ogg pcmfiles trackers synth pcmstream c64opl"
FORMAT_MODULES="Formats Input Posix RawText DynamicLibrary Mad MPG123 ID3Tag Sndfile WavPack Ogg MPCDec FAAD FFmpeg FLAC GME Zlib OpenMPT ModPlug MikMod WildMidi FluidSynth Sidplay AdPlug"
# The C++ shims (not instrumented: -Xswiftc reaches Swift only) of the C++ libraries, and the libraries they need
# (ICU's for CSidplayShim and for CICUShim, the C shim under the ICU module).
FORMAT_MODULES="$FORMAT_MODULES CSidplayShim CAdPlugShim Model Configuration"
CXX_LIBS="$(pkg-config --libs libsidplayfp adplug icu-i18n) -lstdc++"
# The C libraries' header directories those wrappers need (pkg-config names).
FORMAT_PKGS="mad libmpg123 id3tag flac libavformat faad2 ogg vorbis opus sndfile wavpack libgme libopenmpt libmodplug libmikmod zlib"

is_format_target() { case " $FORMAT_TARGETS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# The modules each target links (dependencies included).
modules() {
    case "$1" in
        protocol) echo "Server MPDProtocol PCRE Configuration EventLoop Network Library ICU CICUShim TestSupport Sticker StoredPlaylists Playlists Expat Playback Soxr Samplerate Encoders Lame Chromaprint $FORMAT_MODULES" ;;
        filter) echo "MPDProtocol Model PCRE RawText" ;;
        playlists) echo "Playlists Expat Configuration Posix Model RawText" ;;
        mpddb) echo "Library EventLoop Zlib ICU CICUShim Posix RawText Model" ;;
        config) echo "Configuration Network EventLoop Posix RawText MPDProtocol Model" ;;
        icy) echo "Input Posix RawText Model" ;;
        *) if is_format_target "$1"; then echo "$FORMAT_MODULES"; return; fi
           echo "unknown fuzz target: $1 (targets: $ALL_TARGETS)" >&2; exit 64 ;;
    esac
}

targets=${*:-$ALL_TARGETS}
roots=""
for target in $targets; do
    case "$target" in
        protocol) roots="$roots Server TestSupport" ;;
        filter) roots="$roots MPDProtocol PCRE" ;;
        playlists) roots="$roots Playlists" ;;
        mpddb) roots="$roots Library" ;;
        config) roots="$roots Configuration Network MPDProtocol" ;;
        icy) roots="$roots Input" ;;
        *) if is_format_target "$target"; then roots="$roots Formats"; else modules "$target"; fi ;;
    esac
done
for root in $(echo "$roots" | tr ' ' '\n' | sort -u); do
    $SWIFT build -c release --build-path "$BUILD" -Xswiftc -sanitize=fuzzer,address --target "$root"
done

# The C modules' maps, as SwiftPM passes them for system-library targets.
module_maps=""
for map in Sources/C*/module.modulemap; do module_maps="$module_maps -Xcc -fmodule-map-file=$map"; done
# And those SwiftPM writes for the C++ shims' include directories.
for map in "$BUILD"/release/C*Shim.build/module.modulemap; do
    [ -f "$map" ] && module_maps="$module_maps -Xcc -fmodule-map-file=$map"
done

mkdir -p "$BUILD/bin"
for target in $targets; do
    objects=""
    # Each module once: the protocol target's list and the format modules share some (Configuration).
    for module in $(modules "$target" | tr ' ' '\n' | awk 'NF && !seen[$0]++'); do
        objects="$objects $BUILD/release/$module.build/*.o"
    done
    support=fuzz/targets/FuzzSupport.swift
    if is_format_target "$target"; then support="$support fuzz/targets/FormatFuzzing.swift"; fi
    echo "linking $BUILD/bin/$target"
    # shellcheck disable=SC2086  # word splitting of the lists is intended
    $SWIFTC -O -swift-version 6 -parse-as-library -use-ld=lld $SANITIZE -I "$BUILD/release/Modules" $module_maps \
        $(pkg-config --cflags-only-I $FORMAT_PKGS | sed 's/-I/-Xcc -I/g') \
        -module-name "Fuzz_$target" $support "fuzz/targets/$target.swift" $objects \
        $CXX_LIBS -o "$BUILD/bin/$target"
done
