// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Playback

/// `type "oss"`: writes to an OSS DSP device node (the kernel's API: open, ioctl, write), as `mpd`'s oss output. Each
/// stream opens `device` for writing and settles its format (``OSSNegotiation``); writes block until the device
/// takes the samples, which paces the output. A cancel (seek, stop, skip) drops what the device holds
/// (`SNDCTL_DSP_RESET`) and closes it; the next write reopens it with the same settings, which it must take unchanged.
/// No pause mode: a pause closes the device, as `mpd`'s. Beyond `mpd`, whose oss output has no drain, the end of the
/// queue waits for the device to play what it holds (`SNDCTL_DSP_SYNC`) before the close.
///
/// `@unchecked Sendable`: used only on its output thread once made. The file descriptor never leaves
/// ``OSSDevice``.
final class OSSOutput: AudioOutput, @unchecked Sendable {
    let plugin = "oss"

    /// The device node, as configured (or the default one found).
    let path: String
    private var device: OSSDevice?
    /// The settings of the open stream, kept through a cancel to reopen the device with.
    private var parameters: OSSParameters?

    init(path: String) { self.path = path }

    deinit { self.close() }

    /// Opens the device and negotiates the format, with `mpd`'s messages.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        self.close()
        let device = try self.openDevice()
        do {
            let (accepted, parameters) = try OSSNegotiation.negotiate(format) { device.set($0, &$1) }
            self.device = device
            self.parameters = parameters
            return accepted
        } catch {
            device.close()
            throw error
        }
    }

    private func openDevice() throws(OutputError) -> OSSDevice {
        switch OSSDevice.open(self.path) {
        case .success(let device): return device
        case .failure(let failure): throw OutputError("Error opening OSS device \"\(self.path)\": \(failure.text)")
        }
    }

    func close() {
        self.device?.close()
        self.device = nil
        self.parameters = nil
    }

    /// Writes everything, reopening the device first after a cancel. Audio path: no allocation, lock or log
    /// (only a failure's message allocates).
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        let device: OSSDevice
        if let open = self.device {
            device = open
        } else {
            guard let parameters = self.parameters else { throw OutputError("OSS output not open") }
            device = try self.openDevice()
            do {
                try OSSNegotiation.restore(parameters) { device.set($0, &$1) }
            } catch {
                device.close()
                self.parameters = nil
                throw error
            }
            self.device = device
        }
        var offset = 0
        while offset < data.count {
            let written = device.write(UnsafeRawBufferPointer(rebasing: data[offset...]))
            if written > 0 {
                offset += written
            } else if written < 0 && Int32(-written) != EINTR {
                throw OutputError("Write error on \(self.path): \(OSSError.text(Int32(written)))")
            }
        }
        return data.count
    }

    /// Waits until the device played what it holds.
    func drain() throws(OutputError) -> Bool {
        self.device?.sync()
        return true
    }

    /// Drops what the device holds and closes it; the next write reopens it with the same settings.
    func cancel() {
        guard let device = self.device else { return }
        device.reset()
        device.close()
        self.device = nil
    }
}

/// The `oss` output plugin: makes ``OSSOutput``s and, for `mixer_type "hardware"`, ``OSSMixer``s. Any thread.
public struct OSSOutputPlugin: OutputPlugin {
    /// `oss`.
    public let name = "oss"

    /// The device nodes an output without `device` may use, and those the default-device test opens; `mpd` tries
    /// them last first.
    public static let defaultDevices = ["/dev/sound/dsp", "/dev/dsp"]

    private let logger: Logger

    /// The plugin; `logger` gets `mpd`'s `oss_output` lines about the default devices.
    public init(logger: Logger) { self.logger = logger }

    /// Reads `device`; without one, the first of ``defaultDevices`` (last first) that is a character device.
    ///
    /// - Throws: `error trying to open default OSS device` when none is, after `mpd`'s line about each.
    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        if let device = configuration.parameters["device"] { return OSSOutput(path: device) }
        var kinds: [(path: String, kind: Int32)] = []
        for path in Self.defaultDevices.reversed() {
            let kind = OSSDevice.kind(of: path)
            if kind == 1 { return OSSOutput(path: path) }
            kinds.append((path, kind))
        }
        let log = self.logger.labelled("oss_output")
        for (path, kind) in kinds {
            switch -kind {
            case 0: log.warning("\(path) is not a character device")
            case ENOENT, ENOTDIR: log.warning("\(path) not found")
            case EACCES: log.warning("\(path): permission denied")
            default: log.error("Error accessing \(path): \(OSSError.text(kind))")
            }
        }
        throw OutputError("error trying to open default OSS device")
    }

    /// `mixer_device` (default `/dev/mixer`) and `mixer_control` (default `PCM`: a control's label, any case, as
    /// `SOUND_DEVICE_LABELS` spells it without its padding).
    ///
    /// - Throws: `no such mixer control: NAME`.
    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? {
        try OSSMixer(
            device: configuration.parameters["mixer_device"] ?? OSSMixer.defaultDevice,
            control: configuration.parameters["mixer_control"], logger: self.logger.labelled("oss_mixer"))
    }

    /// Whether one of ``defaultDevices`` (last first) opens for writing now, with `mpd`'s line for each that does
    /// not. Start-up only.
    public func testDefaultDevice() -> DefaultDeviceTest? {
        var errors: [String] = []
        for path in Self.defaultDevices.reversed() {
            switch OSSDevice.open(path) {
            case .success(let device):
                device.close()
                return .opens
            case .failure(let failure):
                errors.append("Error opening OSS device \"\(path)\": \(failure.text)")
            }
        }
        return .fails(errors: errors)
    }
}
