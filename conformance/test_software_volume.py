"""The software mixer's samples against mpd's: `mixer_type "software"` on an ALSA output recorded through
alsa-lib's `file` plugin, at `setvol 50` (mpd's volume curve, its PcmVolume steps of 1/1024 and its dither),
with and without ReplayGain (both stages of mpd's filter chain), for 16- and 24-bit songs."""

from __future__ import annotations

import pytest

import audiofiles

#: 24-bit sources, and 16-bit ones, which mpd's ReplayGain filter widens to 24 bits before a software mixer
#: (the device gets S24_LE).
URIS = ["flac/formats/s24_96000_2ch.flac", "mpcfaad/mpc/replaygain.mpc", "flac/formats/s16_48000_1ch.flac",
        "mpcfaad/aac/ape-tag.aac"]


@pytest.mark.parametrize("replaygain", ["off", "track"])
def test_software_volume_samples_as_mpd(server_factory, format_music, tmp_path, replaygain):
    recorders = {kind: (audiofiles.file_recorder(server_factory, kind, format_music, tmp_path / kind,
                                                 mixer_type="software", replaygain=replaygain), tmp_path / kind)
                 for kind in ("ref", "sut")}
    mismatches = []
    for uri in URIS:
        got = {kind: audiofiles.record_queue(server, directory, ["setvol 50", f'add "{uri}"', "play"])
               for kind, (server, directory) in recorders.items()}
        mismatch = audiofiles.recording_mismatch(uri, got["ref"], got["sut"])
        if mismatch:
            mismatches.append(mismatch)
    assert not mismatches, "\n".join(mismatches)
