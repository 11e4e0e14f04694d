// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback

/// `mixer_type "hardware"` on an oss output: one control of an OSS mixer device, as `mpd`'s oss mixer. The device is
/// opened for reading while the mixer is open; the volume is the control's left level (a warning when the right one
/// differs), and a new volume sets both.
///
/// Event loop thread. `@unchecked Sendable`: the device is used only there.
final class OSSMixer: Mixer, @unchecked Sendable {
    /// `mixer_device` when the block has none.
    static let defaultDevice = "/dev/mixer"

    private let path: String
    /// `mixer_control` as written, `nil` for the default (`SOUND_MIXER_PCM`, not checked against the device).
    private let controlName: String?
    private let control: Int32
    private let logger: Logger
    private var device: OSSDevice?

    /// - Throws: `no such mixer control: NAME` when `control` names none of the mixer's labels.
    init(device: String, control: String?, logger: Logger) throws(OutputError) {
        self.path = device
        self.controlName = control
        self.logger = logger
        if let control {
            guard let index = Self.control(named: control) else {
                throw OutputError("no such mixer control: \(control)")
            }
            self.control = index
        } else {
            self.control = OSSDevice.pcmControl
        }
    }

    deinit { self.close() }

    /// The index of the control whose label is `name` (any case; the label may go on with spaces).
    static func control(named name: String) -> Int32? {
        let wanted = Array(name.utf8).map(Self.lowercased)
        for (index, label) in OSSDevice.controlLabels.enumerated() {
            let bytes = Array(label.utf8)
            guard bytes.count >= wanted.count, bytes.prefix(wanted.count).map(Self.lowercased) == wanted else {
                continue
            }
            if bytes.count == wanted.count || bytes[wanted.count] == UInt8(ascii: " ") { return Int32(index) }
        }
        return nil
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    /// Opens the device and, for a configured control, checks that the mixer has it, with `mpd`'s messages (a global
    /// mixer: the player's ``MixerControl`` opens it on its first use and keeps a failure).
    func open() throws(OutputError) {
        guard self.device == nil else { return }
        self.device = try self.openDevice()
    }

    private func openDevice() throws(OutputError) -> OSSDevice {
        let device: OSSDevice
        switch OSSDevice.open(self.path, forReading: true) {
        case .success(let opened): device = opened
        case .failure(let failure): throw OutputError("failed to open \(self.path): \(failure.text)")
        }
        if let name = self.controlName {
            switch device.controls() {
            case .failure(let failure):
                device.close()
                throw OutputError("READ_DEVMASK failed: \(failure.text)")
            case .success(let (mask, errnoAfter)):
                guard mask & (1 << self.control) != 0 else {
                    device.close()
                    // mpd words it with whatever errno the successful call left.
                    throw OutputError("mixer control \"\(name)\" not usable: \(OSSError.text(-errnoAfter))")
                }
            }
        }
        return device
    }

    func close() {
        self.device?.close()
        self.device = nil
    }

    /// The left level of the open mixer.
    func volume() throws(OutputError) -> Int {
        guard let device = self.device else { throw OutputError("mixer is not open") }
        switch device.level(of: self.control) {
        case .failure(let failure):
            throw OutputError("failed to read OSS volume: \(failure.text)")
        case .success(let level):
            let left = Int(level & 0xff)
            let right = Int((level & 0xff00) >> 8)
            if left != right {
                self.logger.warning("volume for left and right is not the same, \"\(left)\" and \"\(right)\"\n")
            }
            return left
        }
    }

    /// Sets both levels of the open mixer.
    func setVolume(_ volume: Int) throws(OutputError) {
        guard let device = self.device else { throw OutputError("mixer is not open") }
        let result = device.setLevel(Int32((volume << 8) + volume), of: self.control)
        if result != 0 { throw OutputError("failed to set OSS volume: \(OSSError.text(result))") }
    }
}
