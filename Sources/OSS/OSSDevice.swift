// SPDX-License-Identifier: GPL-3.0-or-later

import COSS

/// An open OSS device node (a DSP device or a mixer): its file descriptor, which never leaves this type, and the
/// calls Fermata makes on it (the C shim's wrappers: open, ioctl, write, close through the C library, so a preloaded
/// library such as libaoss may serve them).
///
/// Not thread-safe: used by one thread at a time (the output thread for a DSP device, the event loop for a mixer).
/// Failures are negated errno values, as the shim returns them.
struct OSSDevice {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Opens `path` for writing (a DSP device) or, with `forReading`, for reading (a mixer).
    ///
    /// - Returns: the device, or the negated errno. No allocation for a native string.
    static func open(_ path: String, forReading: Bool = false) -> Result<OSSDevice, OSSFailure> {
        let flags = forReading ? fermata_oss_read_only : fermata_oss_write_only
        let descriptor = path.withCString { fermata_oss_open($0, flags) }
        return descriptor >= 0 ? .success(OSSDevice(descriptor: descriptor)) : .failure(OSSFailure(code: descriptor))
    }

    /// Closes the device; the value must not be used again.
    func close() { fermata_oss_close(self.descriptor) }

    /// Sets one DSP setting: `value` in, the device's choice out; 0 or the negated errno.
    func set(_ setting: OSSSetting, _ value: inout Int32) -> Int32 {
        let which: fermata_oss_setting =
            switch setting {
            case .channels: FERMATA_OSS_CHANNELS
            case .speed: FERMATA_OSS_SPEED
            case .format: FERMATA_OSS_FORMAT
            }
        return fermata_oss_set(self.descriptor, which, &value)
    }

    /// `SNDCTL_DSP_RESET`: drops what the device holds.
    func reset() { _ = fermata_oss_reset(self.descriptor) }

    /// `SNDCTL_DSP_SYNC`: blocks until the device played what it holds.
    func sync() { _ = fermata_oss_sync(self.descriptor) }

    /// Writes bytes: how many the device took, or the negated errno. Audio path: no allocation.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return fermata_oss_write(self.descriptor, base, UInt(bytes.count))
    }

    /// `SOUND_MIXER_READ_DEVMASK`: the mixer's controls, one bit each, and errno after the call (whatever it
    /// returned), or the negated errno.
    func controls() -> Result<(mask: Int32, errnoAfter: Int32), OSSFailure> {
        var mask: Int32 = 0
        var after: Int32 = 0
        let result = fermata_oss_mixer_devmask(self.descriptor, &mask, &after)
        return result == 0 ? .success((mask, after)) : .failure(OSSFailure(code: result))
    }

    /// `MIXER_READ(control)`: the level (left in the low byte, right in the next), or the negated errno.
    func level(of control: Int32) -> Result<Int32, OSSFailure> {
        var level: Int32 = 0
        let result = fermata_oss_mixer_read(self.descriptor, control, &level)
        return result == 0 ? .success(level) : .failure(OSSFailure(code: result))
    }

    /// `MIXER_WRITE(control)`: 0 or the negated errno.
    func setLevel(_ level: Int32, of control: Int32) -> Int32 {
        var value = level
        return fermata_oss_mixer_write(self.descriptor, control, &value)
    }

    /// What `path` is (`stat`): 1 for a character device, 0 for something else, or the negated errno.
    static func kind(of path: String) -> Int32 { path.withCString { fermata_oss_is_character_device($0) } }

    /// The labels of the mixer's controls (`SOUND_DEVICE_LABELS`, padded with spaces to five characters).
    static let controlLabels: [String] = (0..<fermata_oss_mixer_count).map {
        String(cString: fermata_oss_mixer_label($0))
    }

    /// `SOUND_MIXER_PCM`, the control of a mixer without `mixer_control`.
    static let pcmControl = Int32(fermata_oss_mixer_pcm)
}

/// A failed call on an OSS device: the errno, negated.
struct OSSFailure: Error, Equatable {
    var code: Int32

    /// `strerror`'s text.
    var text: String { OSSError.text(self.code) }
}
