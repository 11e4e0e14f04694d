#pragma once
// The kernel's OSS interface (<sys/soundcard.h>, which is <linux/soundcard.h>): device nodes driven with open,
// ioctl, write and close. Swift can neither call the variadic ioctl nor expand the request macros, so each call the
// OSS module makes has a non-variadic wrapper here, with the request numbers taken from the system header. Every
// wrapper goes through the C library's symbols, so a preloaded library (alsa-oss's libaoss) can take the calls.
// Each returns 0 (or a count) on success and the errno value, negated, on failure.
#include <sys/soundcard.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/// The sample formats Fermata can write to a DSP device: the header defines no 24- or 32-bit native-endian format
/// on Linux, so 8- and 16-bit signed are all there is.
static const int fermata_oss_afmt_query = AFMT_QUERY;
static const int fermata_oss_afmt_s8 = AFMT_S8;
static const int fermata_oss_afmt_s16_ne = AFMT_S16_NE;

/// Which setting an ioctl of `fermata_oss_set` changes.
enum fermata_oss_setting { FERMATA_OSS_CHANNELS, FERMATA_OSS_SPEED, FERMATA_OSS_FORMAT };

/// open(2) with O_NOCTTY and O_CLOEXEC: the descriptor, or -errno.
static inline int fermata_oss_open(const char *path, int flags) {
    int fd = open(path, flags | O_NOCTTY | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

/// A DSP device for writing, or a mixer for reading.
static const int fermata_oss_write_only = O_WRONLY;
static const int fermata_oss_read_only = O_RDONLY;

static inline void fermata_oss_close(int fd) { close(fd); }

/// SNDCTL_DSP_CHANNELS, SNDCTL_DSP_SPEED or SNDCTL_DSP_SETFMT: `value` in, the device's choice out.
static inline int fermata_oss_set(int fd, enum fermata_oss_setting setting, int *value) {
    unsigned long request = setting == FERMATA_OSS_CHANNELS ? SNDCTL_DSP_CHANNELS
        : setting == FERMATA_OSS_SPEED ? SNDCTL_DSP_SPEED : SNDCTL_DSP_SETFMT;
    return ioctl(fd, request, value) >= 0 ? 0 : -errno;
}

/// SNDCTL_DSP_RESET: drops what the device holds.
static inline int fermata_oss_reset(int fd) { return ioctl(fd, SNDCTL_DSP_RESET, 0) >= 0 ? 0 : -errno; }

/// SNDCTL_DSP_SYNC: waits until the device played what it holds.
static inline int fermata_oss_sync(int fd) { return ioctl(fd, SNDCTL_DSP_SYNC, 0) >= 0 ? 0 : -errno; }

/// write(2): the bytes written, or -errno.
static inline long fermata_oss_write(int fd, const void *data, unsigned long size) {
    long written = (long)write(fd, data, size);
    return written >= 0 ? written : -(long)errno;
}

/// stat(2) of a device path: 1 for a character device, 0 for anything else, -errno when it cannot be read.
static inline int fermata_oss_is_character_device(const char *path) {
    struct stat info;
    if (stat(path, &info) != 0) return -errno;
    return S_ISCHR(info.st_mode) ? 1 : 0;
}

/// SOUND_MIXER_READ_DEVMASK: the controls the mixer has, one bit each. `errno_after` is errno after the call,
/// whatever it returned (mpd words a missing control with it).
static inline int fermata_oss_mixer_devmask(int fd, int *mask, int *errno_after) {
    int result = ioctl(fd, SOUND_MIXER_READ_DEVMASK, mask);
    *errno_after = errno;
    return result >= 0 ? 0 : -errno;
}

/// MIXER_READ(control) and MIXER_WRITE(control): left in the low byte, right in the next, 0 to 100 each.
static inline int fermata_oss_mixer_read(int fd, int control, int *level) {
    return ioctl(fd, MIXER_READ(control), level) >= 0 ? 0 : -errno;
}
static inline int fermata_oss_mixer_write(int fd, int control, int *level) {
    return ioctl(fd, MIXER_WRITE(control), level) >= 0 ? 0 : -errno;
}

/// The mixer's controls: SOUND_MIXER_NRDEVICES labels (SOUND_DEVICE_LABELS, such as "Vol  " and "Pcm  "), and
/// SOUND_MIXER_PCM, the control used when none is configured.
static const int fermata_oss_mixer_count = SOUND_MIXER_NRDEVICES;
static const int fermata_oss_mixer_pcm = SOUND_MIXER_PCM;
static inline const char *fermata_oss_mixer_label(int control) {
    static const char *const labels[SOUND_MIXER_NRDEVICES] = SOUND_DEVICE_LABELS;
    return control >= 0 && control < SOUND_MIXER_NRDEVICES ? labels[control] : "";
}
