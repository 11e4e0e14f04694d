// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA
import Playback

/// An ALSA configuration tree parsed from asoundrc text, used instead of the system's configuration when opening a
/// device (`snd_pcm_open_lconf`). Lets tests define devices without touching `HOME` or `ALSA_CONFIG_PATH`.
///
/// `@unchecked Sendable`: the tree is built once in `init` and only read (by alsa-lib) afterwards.
final class ALSALocalConfiguration: @unchecked Sendable {
    /// The root `snd_config_t`.
    let tree: OpaquePointer

    /// Parses `text` (asoundrc syntax). Any thread.
    init(text: String) throws(OutputError) {
        var top: OpaquePointer?
        var result = snd_config_top(&top)
        guard result >= 0, let top else { throw ALSAError.error("snd_config_top() failed", result) }
        var input: OpaquePointer?
        let bytes = Array(text.utf8)
        result = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, buffer.count) }
        }
        guard result >= 0, let input else {
            snd_config_delete(top)
            throw ALSAError.error("snd_input_buffer_open() failed", result)
        }
        result = snd_config_load(top, input)
        snd_input_close(input)
        guard result >= 0 else {
            snd_config_delete(top)
            throw ALSAError.error("snd_config_load() failed", result)
        }
        self.tree = top
    }

    deinit { snd_config_delete(self.tree) }
}
