// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import Input
import Synchronization

/// What libavformat's interrupt callback asks: set once `cancellation` fires, so a blocking open or read of a
/// network protocol or demuxer returns. Any thread; the owner keeps it alive while libavformat may call back.
final class FFmpegInterrupt: Sendable {
    private let cancelled = Atomic<Bool>(false)

    init(_ cancellation: InputCancellation) {
        cancellation.onCancel { [weak self] in self?.cancelled.store(true, ordering: .releasing) }
    }

    var isCancelled: Bool { self.cancelled.load(ordering: .acquiring) }

    /// The callback to give libavformat; its opaque pointer is this object, unretained.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<FFmpegInterrupt>.fromOpaque(opaque).takeUnretainedValue().isCancelled ? 1 : 0
            }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
