// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// What the audio threads tell the player on the event loop (posted with `EventLoop.execute`, once per song
/// border or failure, never per period).
enum PlayerEngineEvent: Sendable {
    /// An output played the first chunk of the song with `token`.
    case songStarted(token: UInt64, generation: UInt64)
    /// The decoder opened the song with `token` (not a queued one), which it decodes in `format`.
    case decoderOpened(token: UInt64, format: AudioFormat, generation: UInt64)
    /// An output stopped before the first chunk of the queued song because `borderPause` was set.
    case pausedAtBorder(token: UInt64, generation: UInt64)
    /// An output read the whole pipe, `written` chunks, after the decoder marked the end of the stream
    /// (`PlayerEndState.endRequested`): the loop ends the stream unless a song was queued meanwhile (or the pipe
    /// grew since: a later request of the same generation stands for the new end).
    case endReached(generation: UInt64, written: UInt64)
    /// An output played out everything (the last song with `token`; `nil` when it got no chunk since the
    /// pipe was flushed: the song ended without a sample) and closed its stream.
    case outputEnded(output: Int, token: UInt64?, generation: UInt64)
    /// An output failed (it retries by itself).
    case outputFailed(output: Int, message: String)
    /// An output with a mixer opened its stream: the loop opens the mixer (`mpd`'s output control does then).
    case outputOpened(output: Int)
    /// A failed output works again.
    case outputRecovered(output: Int)
    /// The decoder could not open or decode the song; `stopped`: nothing else plays in this generation.
    case decodeFailed(token: UInt64, message: String, generation: UInt64, stopped: Bool)
    /// A hardware mixer saw another program change the volume.
    case mixerChanged
    /// An output played the first chunk of the song with `token` decoded after its stream brought new tags (a
    /// radio station's title): `PlayerShared.takeTags(revision:)` has them.
    case streamTag(token: UInt64, revision: UInt64, generation: UInt64)
}

/// The decoder's end-of-stream state, shared by the decoder, the outputs and the loop.
enum PlayerEndState: Int {
    /// Decoding (or idle with nothing to say).
    case running = 0
    /// The last song is decoded and nothing is queued: outputs play out what is left.
    case endOfStream = 1
    /// The loop ended the stream (an output had read all of it): a queued song arriving now is too late, and the
    /// outputs play out and close.
    case claimed = 2
    /// Nothing will be written in this generation (the song failed and nothing was queued).
    case stopped = 3
    /// An output read all of the stream and asked the loop to end it (`endReached`). Only the loop decides: a song
    /// the playlist queues on the loop before then (it does on `songStarted`, which the output posted earlier) is
    /// still appended, however late the loop is, and the outputs go on without closing their streams.
    case endRequested = 4
}
