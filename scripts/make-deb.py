#!/usr/bin/python3
"""Builds Fermata's Debian package from a built binary, with dpkg-deb (`make deb`).

    scripts/make-deb.py [--binary .build/release/fermata] [--out .build/deb] [--compression xz|gzip]

Prints the path of the .deb. The package holds:
  /usr/bin/fermata                      the binary, stripped, its RUNPATH set to /usr/lib/fermata
  /usr/lib/fermata/lib*.so              the Swift runtime libraries it needs (the toolchain is no
                                        Debian package), found by ldd outside the system's directories
  /etc/fermata.conf                     packaging/deb/fermata.conf, a conffile
  /usr/lib/systemd/system/fermata.{service,socket}   etc/'s units
  /usr/share/doc/fermata/               copyright, the Swift runtime's licence
and packaging/deb's postinst, prerm and postrm. Depends: is dpkg-shlibdeps' answer for the binary
and the shipped libraries, plus the libraries Fermata loads with dlopen (FFmpeg's, libchromaprint,
libsmbclient, libfluidsynth, libshout, libpulse, libpipewire, libao, libopenal, libjack, libsndio, libmikmod, libcurl-gnutls, libsoxr, libopenmpt, libmodplug, libgme; the sonames their headers or shims name, each with the dependency its Debian package's shlibs file declares), plus adduser.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGING = REPO / "packaging" / "deb"
NAME = "fermata"
PRIVATE_LIBS = "/usr/lib/fermata"
# Where Debian's own libraries live; anything ldd finds elsewhere ships in the package.
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/")
# The libraries Fermata opens with dlopen (Sources/FFmpeg/FFmpegLibraries.swift,
# Sources/Chromaprint/ChromaprintContext.swift, Sources/SMBClient/SMBContext.swift, Sources/FluidSynth,
# Sources/Shout, Sources/Pulse, Sources/PipeWire, Sources/AO, Sources/OpenAL, Sources/Jack, Sources/Sndio, Sources/MikMod, Sources/Curl/CurlGlobal.swift,
# Sources/Soxr, Sources/OpenMPT, Sources/ModPlug, Sources/GME), by the header
# that gives each one's major version (the soname the build expects).
DLOPENED = {
    "libavutil": ("libavutil/version.h", "LIBAVUTIL_VERSION_MAJOR"),
    "libavcodec": ("libavcodec/version_major.h", "LIBAVCODEC_VERSION_MAJOR"),
    "libavformat": ("libavformat/version_major.h", "LIBAVFORMAT_VERSION_MAJOR"),
    "libchromaprint": ("chromaprint.h", "CHROMAPRINT_VERSION_MAJOR"),
    # No version in these headers (fluidsynth.h's is the package's, 2.x): the soname Debian's development
    # package links is named in the module's shim (see SHIMS).
    "libsmbclient": ("samba-4.0/libsmbclient.h", None),
    "libfluidsynth": ("fluidsynth.h", None),
    "libshout": ("shout/shout.h", None),
    "libpulse": ("pulse/pulseaudio.h", None),
    "libpipewire-0.3": ("pipewire-0.3/pipewire/pipewire.h", None),
    "libao": ("ao/ao.h", None),
    "libopenal": ("AL/al.h", None),
    "libjack": ("jack/jack.h", None),
    "libsndio": ("sndio.h", None),
    "libmikmod": ("mikmod.h", None),
    "libcurl-gnutls": ("curl/curl.h", None),
    "libsoxr": ("soxr.h", None),
    "libopenmpt": ("libopenmpt/libopenmpt.h", None),
    "libmodplug": ("libmodplug/modplug.h", None),
    "libgme": ("gme/gme.h", None),
}
# The shims naming the sonames of the dlopen'ed libraries whose header gives no version
# (`#define FERMATA_..._SONAME "libsmbclient.so.0"`).
SHIMS = {
    "libsmbclient": "CSMBClient",
    "libfluidsynth": "CFluidSynth",
    "libshout": "CShout",
    "libpulse": "CPulse",
    "libpipewire-0.3": "CPipeWire",
    "libao": "CAO",
    "libopenal": "COpenAL",
    "libjack": "CJack",
    "libsndio": "CSndio",
    "libmikmod": "CMikMod",
    "libcurl-gnutls": "CCurl",
    "libsoxr": "CSoxr",
    "libopenmpt": "COpenMPT",
    "libmodplug": "CModPlug",
    "libgme": "CGME",
}
MULTIARCH = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                           text=True).stdout.strip()
INCLUDE_DIRS = [Path("/usr/include") / MULTIARCH, Path("/usr/include")]
LIBRARY_DIRS = [Path("/usr/lib") / MULTIARCH, Path("/lib") / MULTIARCH]


def fail(message: str) -> None:
    sys.exit(f"make-deb: {message}")


def run(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    if result.returncode != 0:
        fail(f"{' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def version(binary: Path) -> str:
    """`Fermata 0.1.0 (MPD protocol 0.23.5)` → 0.1.0."""
    match = re.match(r"Fermata (\S+)", run(str(binary), "--version"))
    if not match:
        fail(f"{binary} --version does not say a version")
    return match.group(1)


def private_libraries(binary: Path) -> list[Path]:
    """The libraries ldd resolves outside the system's directories (the Swift runtime's)."""
    found = []
    for line in run("ldd", str(binary)).splitlines():
        if "not found" in line:
            fail(f"ldd: {line.strip()}")
        match = re.match(r"\s*(\S+) => (/\S+)", line)
        if match and not match.group(2).startswith(SYSTEM_DIRS):
            found.append(Path(match.group(2)))
    return found


def shim_soname(library: str) -> str:
    """The soname a module's shim loads (its FERMATA_..._SONAME)."""
    shim = REPO / "Sources" / SHIMS[library] / "shim.h"
    match = re.search(r'#define\s+FERMATA_\w+_SONAME\s+"([^"]+)"', shim.read_text())
    if not match:
        fail(f"{shim} names no soname")
    return match.group(1)


def dlopened_sonames() -> list[str]:
    names = []
    for library, (header, macro) in DLOPENED.items():
        if macro is None:
            if not any((directory / header).exists() for directory in INCLUDE_DIRS):
                fail(f"{header} (the header the build used) not found")
            names.append(shim_soname(library))
            continue
        for directory in INCLUDE_DIRS:
            path = directory / header
            if path.exists():
                match = re.search(rf"#define\s+{macro}\s+(\d+)", path.read_text())
                if match:
                    names.append(f"{library}.so.{match.group(1)}")
                    break
        else:
            fail(f"{header} (the header the build used) not found")
    return names


def shlibs_dependency(soname: str) -> str:
    """The dependency Debian declares for a library, from its package's shlibs file, as
    dpkg-shlibdeps would write it for a library the binary links."""
    match = re.fullmatch(r"(.+)\.so\.(\d+)", soname)
    name, major = match.group(1), match.group(2)
    path = next((d / soname for d in LIBRARY_DIRS if (d / soname).exists()), None)
    if path is None:
        fail(f"{soname} is not installed (Fermata loads it at run time)")
    real = os.path.realpath(path)
    # Debian 12 merged /lib into /usr/lib, but the dpkg database names each file where its package put it.
    candidates = {real, real.removeprefix("/usr"), "/usr" + real if not real.startswith("/usr/") else real}
    owner = None
    for candidate in candidates:
        result = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            owner = result.stdout.split(":")[0]
            break
    if owner is None:
        fail(f"no Debian package holds {real}")
    shlibs = run("dpkg-query", "--control-show", owner, "shlibs")
    for line in shlibs.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3 and fields[0] == name and fields[1] == major:
            return fields[2]
    fail(f"{owner}'s shlibs file has no entry for {soname}")


def install(source: Path, target: Path, mode: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(mode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, default=REPO / ".build" / "release" / NAME)
    parser.add_argument("--out", type=Path, default=REPO / ".build" / "deb")
    parser.add_argument("--compression", choices=("xz", "gzip"), default="xz",
                        help="xz (dpkg-deb's default, smaller) or gzip (4 times faster, for tests)")
    options = parser.parse_args()
    binary = options.binary.resolve()
    if not binary.is_file():
        fail(f"{binary} not found: `make release` builds it")
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "patchelf", "strip", "ldd"):
        if not shutil.which(tool):
            fail(f"{tool} missing: scripts/install-deps.sh deb installs it")

    stage = options.out / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    root = stage / "debian" / NAME
    control_dir = root / "DEBIAN"
    control_dir.mkdir(parents=True)

    target = root / "usr" / "bin" / NAME
    install(binary, target, 0o755)
    run("strip", "--strip-unneeded", str(target))
    run("patchelf", "--set-rpath", PRIVATE_LIBS, str(target))
    libraries = private_libraries(binary)
    for library in libraries:
        shipped = root / PRIVATE_LIBS.lstrip("/") / library.name
        install(library, shipped, 0o644)
        run("strip", "--strip-unneeded", str(shipped))
    install(PACKAGING / "fermata.conf", root / "etc" / "fermata.conf", 0o644)
    for unit in ("fermata.service", "fermata.socket"):
        install(REPO / "etc" / unit, root / "usr" / "lib" / "systemd" / "system" / unit, 0o644)
    doc = root / "usr" / "share" / "doc" / NAME
    install(PACKAGING / "copyright", doc / "copyright", 0o644)
    if libraries:
        # The toolchain's licence (Apache 2.0 with the Runtime Library Exception), beside its lib/swift.
        licence = libraries[0].parents[3] / "share" / "swift" / "LICENSE.txt"
        if not licence.exists():
            fail(f"{licence} (the Swift runtime's licence) not found")
        install(licence, doc / "swift-runtime-LICENSE.txt", 0o644)
    for script in ("postinst", "prerm", "postrm"):
        install(PACKAGING / script, control_dir / script, 0o755)
    (control_dir / "conffiles").write_text("/etc/fermata.conf\n")

    # dpkg-shlibdeps reads debian/control for the package names; a minimal one does.
    (stage / "debian" / "control").write_text(f"Source: {NAME}\n\nPackage: {NAME}\nArchitecture: any\n")
    shipped_libs = sorted(str(p.relative_to(stage)) for p in (root / PRIVATE_LIBS.lstrip("/")).glob("*.so*"))
    output = run("dpkg-shlibdeps", "-O", f"-S{root}",
                 f"debian/{NAME}/usr/bin/{NAME}", *shipped_libs, cwd=stage)
    match = re.search(r"^shlibs:Depends=(.*)$", output, re.MULTILINE)
    if not match:
        fail(f"dpkg-shlibdeps said nothing of Depends:\n{output}")
    depends = [d.strip() for d in match.group(1).split(",") if d.strip()]
    depends += [shlibs_dependency(soname) for soname in dlopened_sonames()]
    depends.append("adduser")
    depends = sorted(set(depends))

    installed_kib = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()
                        and control_dir not in p.parents) // 1024 + 1
    arch = run("dpkg", "--print-architecture").strip()
    package_version = version(binary)
    (control_dir / "control").write_text(
        (PACKAGING / "control").read_text()
        .replace("@VERSION@", package_version)
        .replace("@ARCHITECTURE@", arch)
        .replace("@INSTALLED_SIZE@", str(installed_kib))
        .replace("@DEPENDS@", ", ".join(depends)))
    sums = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and control_dir not in p.parents):
        relative = path.relative_to(root)
        if str(relative) != "etc/fermata.conf":
            sums.append(f"{hashlib.md5(path.read_bytes()).hexdigest()}  {relative}\n")
    (control_dir / "md5sums").write_text("".join(sums))
    (control_dir / "md5sums").chmod(0o644)

    deb = options.out / f"{NAME}_{package_version}_{arch}.deb"
    run("dpkg-deb", "--root-owner-group", f"-Z{options.compression}", "--build", str(root), str(deb))
    print(deb)


if __name__ == "__main__":
    main()
