#!/bin/sh
# Installs the Debian packages Fermata needs to build, run and test, if any is missing.
# Usage: scripts/install-deps.sh [build|run|deb|test]   (default: test, which includes the others)
set -eu

BUILD_PACKAGES="pkg-config linux-libc-dev libpcre2-dev libicu-dev libasound2-dev libmpg123-dev libmad0-dev libid3tag0-dev libavahi-client-dev libsqlite3-dev libsoxr-dev libsamplerate0-dev libflac-dev libavformat-dev libavcodec-dev libavutil-dev libmpcdec-dev libfaad-dev libogg-dev libvorbis-dev libopus-dev libmp3lame-dev libshout-dev libpulse-dev libao-dev libopenal-dev libjack-dev libsndio-dev libsndfile1-dev libwavpack-dev libgme-dev libopenmpt-dev libmodplug-dev libmikmod-dev libfluidsynth-dev libwildmidi-dev zlib1g-dev libexpat1-dev libsidplayfp-dev libadplug-dev libcurl4-gnutls-dev libsystemd-dev libchromaprint-dev libsmbclient-dev libnfs-dev libcdio-paranoia-dev libdbus-1-dev libpipewire-0.3-dev libspa-0.2-dev"
RUN_PACKAGES="python3 lame sox python3-mutagen flac ffmpeg musepack-tools vorbis-tools opus-tools wavpack"
# dpkg-dev (dpkg-shlibdeps, dpkg-architecture; binutils' strip and readelf), patchelf, python3: `make deb`
# (scripts/make-deb.py); conformance/test_deb.py builds the package too.
DEB_PACKAGES="dpkg-dev binutils patchelf python3"
# avahi-daemon, avahi-utils (avahi-browse), dbus (dbus-daemon), iproute2 (ip) and util-linux (unshare, nsenter):
# conformance/test_zeroconf.py runs its own bus and avahi-daemon in private network namespaces.
# dbus (dbus-daemon), python3-dbus, python3-gi: conformance/test_udisks.py runs a bus of its own (a Unix socket in a
# temporary directory) with tools/fakeudisks2.py standing in for UDisks2 on it.
# systemd (systemd-analyze, systemd-socket-activate): conformance/test_systemd.py and test_deb.py, which also needs
# adduser (the package's postinst), mount (a private /opt/swift) and mpd (installed beside it).
# mpg123: the reference decodes of conformance/test_audio.py.
# icecast2: the Icecast server conformance/test_shout.py streams to (started by the test on 127.0.0.1).
# snapserver, snapclient: conformance/test_snapcast.py feeds a snapserver from the fifo output (started by the test on
# 127.0.0.1) and records two snapclients; snapserver's meta_mpd.py plug-in controls Fermata over the protocol and
# imports python3-mpd, python3-dbus and python3-gi (snapserver only recommends python3).
# samba (smbd): Tests/SMBClientTests serves a share on 127.0.0.1 with its own smbd (no nmbd, no NetBIOS).
# nfs-ganesha, nfs-ganesha-vfs, rpcbind, libnfs-utils: conformance/test_nfs.py serves an export with its own ganesha
# and rpcbind in a private network namespace (nfs-ls tells when it is up).
# python3-pytest-xdist: make test runs the conformance files in two workers.
# openssl: conformance/test_webdav.py makes a self-signed certificate for its https:// server.
# pulseaudio, libasound2-plugins: conformance/test_hardware_mixer.py sets a hardware mixer through PulseAudio's ALSA
# control plugin on a daemon it starts itself (a null sink, a Unix socket in a temporary directory), in place of a
# sound card's control; conformance/test_pulse.py plays to such a daemon, and reads and sets its streams with
# pulseaudio-utils' pactl.
# pipewire, pipewire-bin: conformance/test_pipewire.py plays to a pipewire daemon it starts itself (no session
# manager, a socket in a temporary directory), links the streams and records them with pipewire-bin's pw-cli,
# pw-link, pw-dump and pw-record.
# jackd1: conformance/test_jack.py plays to a JACK server it starts itself (`jackd -d dummy`), recording through
# libjack. JACK1 (libjack-dev, libjack0, jackd1), not jackd2: libjack-jackd2-dev would replace libjack-dev, which other
# -dev packages accept; Debian's mpd takes either libjack.
# sndiod: conformance/test_sndio.py plays to sndiod servers it starts itself (a unit of their own each), whose device
# is an ALSA file PCM over PulseAudio's ALSA plugin (pulseaudio, libasound2-plugins: a null sink keeps time), and
# reads and sets the servers' levels on them with sndio-tools' sndioctl.
# timgm6mb-soundfont, freepats: the SoundFont and the GUS patches the FluidSynth and WildMidi unit tests play MIDI with.
TEST_PACKAGES="mpd mpc mpg123 jackd1 sndiod sndio-tools pulseaudio pulseaudio-utils pipewire pipewire-bin libasound2-plugins alsa-oss icecast2 snapserver snapclient python3-dbus python3-gi timgm6mb-soundfont freepats python3-pytest python3-pytest-xdist python3-mpd tmux ncmpcpp ncmpc samba nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils openssl procps avahi-daemon avahi-utils dbus iproute2 util-linux systemd adduser mount"

case "${1:-test}" in
    build) wanted="$BUILD_PACKAGES" ;;
    run) wanted="$BUILD_PACKAGES $RUN_PACKAGES" ;;
    deb) wanted="$BUILD_PACKAGES $DEB_PACKAGES" ;;
    test) wanted="$BUILD_PACKAGES $RUN_PACKAGES $DEB_PACKAGES $TEST_PACKAGES" ;;
    *) echo "usage: $0 [build|run|deb|test]" >&2; exit 64 ;;
esac

missing=""
for package in $wanted; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $package"
    fi
done

if [ -n "$missing" ]; then
    echo "installing:$missing"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    # The mpd package may try to start its own daemon; tests start their own instances instead.
    $SUDO apt-get install -y -q --no-install-recommends $missing
    case " $missing " in
    *" avahi-daemon "*)
        # Installing it may have started a system avahi-daemon (on a host with systemd; Docker's policy-rc.d
        # refuses). The tests need only the binary, so stop and disable the one we just caused to run.
        if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
            $SUDO systemctl disable --now avahi-daemon.socket avahi-daemon.service >/dev/null 2>&1 || true
        elif avahi-daemon --check 2>/dev/null; then
            $SUDO avahi-daemon --kill || true
        fi
        ;;
    esac
    # Stops and disables the system services named (systemd units, or init.d scripts of the same name without
    # `.socket`) that installing their package just started.
    disable_services() {
        for service in "$@"; do
            if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
                $SUDO systemctl disable --now "$service" >/dev/null 2>&1 || true
            elif [ -x "/etc/init.d/${service%.socket}" ]; then
                $SUDO "/etc/init.d/${service%.socket}" stop >/dev/null 2>&1 || true
            fi
        done
    }
    case " $missing " in
    # Likewise a system icecast2 (port 8000 on every interface): conformance/test_shout.py runs its own.
    *" icecast2 "*) disable_services icecast2 ;;
    esac
    case " $missing " in
    # Likewise a system smbd (ports 139 and 445 on every interface) and nmbd (NetBIOS broadcasts): the tests start
    # their own smbd on 127.0.0.1.
    *" samba "*) disable_services smbd nmbd samba-ad-dc ;;
    esac
    case " $missing " in
    # Likewise a system rpcbind (port 111 on every interface) and nfs-ganesha: conformance/test_nfs.py runs its own
    # in a private network namespace.
    *" nfs-ganesha "* | *" rpcbind "*) disable_services nfs-ganesha rpcbind.socket rpcbind ;;
    esac
    case " $missing " in
    # pipewire starts no system service, but its user units are enabled for every login session (and, on a desktop,
    # would take the sound card): conformance/test_pipewire.py runs its own daemon.
    *" pipewire "*)
        if command -v systemctl >/dev/null 2>&1; then
            $SUDO systemctl --global disable pipewire.socket pipewire.service >/dev/null 2>&1 || true
        fi
        ;;
    esac
    # Likewise a system snapserver (ports 1704, 1705 and 1780 on every interface, published over zeroconf) or
    # snapclient (browsing the LAN): conformance/test_snapcast.py runs its own on loopback.
    for snapcast in snapserver snapclient; do
        case " $missing " in
        *" $snapcast "*) disable_services "$snapcast" ;;
        esac
    done
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "error: the Swift toolchain (swift 6.1 or newer) is not on PATH" >&2
    exit 1
fi
