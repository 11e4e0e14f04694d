// SPDX-License-Identifier: GPL-3.0-or-later

import CFLAC

/// A native FLAC stream encoder over libFLAC, as `mpd`'s flac encoder plugin: 8, 16 or 24 bits (24 in 32-bit
/// words) interleaved input at `compression` 0…8, written as it is produced (no seeking back to finish the
/// STREAMINFO, as for a live stream).
///
/// Confined to one thread (the output thread). The widening buffer and the output are sized once for the
/// largest write seen. Unsafe: the `FLAC__StreamEncoder` pointer never leaves this class.
public final class FLACStreamEncoder {
    private let encoder: UnsafeMutablePointer<FLAC__StreamEncoder>
    private let channels: Int
    private let bytesPerSample: Int
    private let sink = EncoderSink()
    private var samples: [Int32] = []

    /// Sets libFLAC up and starts the stream (its `fLaC` marker and STREAMINFO come out first).
    ///
    /// - Parameter bitsPerSample: 8, 16 or 24 (input samples of 1, 2 or 4 bytes).
    /// - Throws: `FLACError.library` with `mpd`'s wording when libFLAC refuses a setting.
    public init(channels: Int, bitsPerSample: Int, sampleRate: Int, compression: Int) throws(FLACError) {
        guard let encoder = FLAC__stream_encoder_new() else {
            throw .library(function: "FLAC__stream_encoder_new() failed", status: "")
        }
        self.encoder = encoder
        self.channels = channels
        self.bytesPerSample = bitsPerSample == 24 ? 4 : bitsPerSample / 8
        func check(_ ok: FLAC__bool, _ what: String) throws(FLACError) {
            guard ok != 0 else {
                FLAC__stream_encoder_delete(encoder)
                throw .library(function: what, status: "")
            }
        }
        try check(
            FLAC__stream_encoder_set_compression_level(encoder, UInt32(compression)),
            "error setting flac compression to \(compression)")
        try check(
            FLAC__stream_encoder_set_channels(encoder, UInt32(channels)),
            "error setting flac channels num to \(channels)")
        try check(
            FLAC__stream_encoder_set_bits_per_sample(encoder, UInt32(bitsPerSample)),
            "error setting flac bit format to \(bitsPerSample)")
        try check(
            FLAC__stream_encoder_set_sample_rate(encoder, UInt32(sampleRate)),
            "error setting flac sample rate to \(sampleRate)")
        // The encoder owns the sink for its whole life, so libFLAC's client pointer stays valid.
        let client = Unmanaged.passUnretained(self.sink).toOpaque()
        let status = FLAC__stream_encoder_init_stream(encoder, flacWrite, nil, nil, nil, client)
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK else {
            FLAC__stream_encoder_delete(encoder)
            throw .library(
                function: "failed to initialize encoder",
                status: initStatusNames[safe: Int(status.rawValue)] ?? "\(status.rawValue)")
        }
    }

    deinit { FLAC__stream_encoder_delete(self.encoder) }

    /// Encodes interleaved native-endian samples (whole frames).
    ///
    /// - Throws: `FLACError.library` when libFLAC fails.
    public func encode(_ pcm: UnsafeRawBufferPointer) throws(FLACError) {
        let count = pcm.count / self.bytesPerSample
        let frames = count / self.channels
        guard frames > 0 else { return }
        if self.samples.count < count { self.samples = [Int32](repeating: 0, count: count) }
        let ok = self.samples.withUnsafeMutableBufferPointer { samples in
            switch self.bytesPerSample {
            case 1:
                for index in 0..<count { samples[index] = Int32(pcm.load(fromByteOffset: index, as: Int8.self)) }
            case 2:
                for index in 0..<count {
                    samples[index] = Int32(pcm.loadUnaligned(fromByteOffset: 2 * index, as: Int16.self))
                }
            default:
                for index in 0..<count { samples[index] = pcm.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self) }
            }
            return FLAC__stream_encoder_process_interleaved(self.encoder, samples.baseAddress, UInt32(frames))
        }
        guard ok != 0 else { throw .library(function: "flac encoder process failed", status: "") }
    }

    /// Ends the stream: the last frame comes out.
    public func finish() { FLAC__stream_encoder_finish(self.encoder) }

    /// Hands what libFLAC wrote since the last call to `body`.
    public func output(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard !self.sink.bytes.isEmpty else { return }
        self.sink.bytes.withUnsafeBytes { body($0) }
        self.sink.bytes.removeAll(keepingCapacity: true)
    }
}

/// Where libFLAC's write callback puts the encoded bytes.
private final class EncoderSink {
    var bytes: [UInt8] = []
}

private let flacWrite: FLAC__StreamEncoderWriteCallback = { _, buffer, bytes, _, _, client in
    let sink = Unmanaged<EncoderSink>.fromOpaque(client.unsafelyUnwrapped).takeUnretainedValue()
    if let buffer { sink.bytes.append(contentsOf: UnsafeBufferPointer(start: buffer, count: bytes)) }
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK
}

/// libFLAC's names of encoder init statuses (its `FLAC__StreamEncoderInitStatusString` table is not importable).
private let initStatusNames = [
    "FLAC__STREAM_ENCODER_INIT_STATUS_OK", "FLAC__STREAM_ENCODER_INIT_STATUS_ENCODER_ERROR",
    "FLAC__STREAM_ENCODER_INIT_STATUS_UNSUPPORTED_CONTAINER", "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_CALLBACKS",
    "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_NUMBER_OF_CHANNELS",
    "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_BITS_PER_SAMPLE", "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_SAMPLE_RATE",
    "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_BLOCK_SIZE", "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_MAX_LPC_ORDER",
    "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_QLP_COEFF_PRECISION",
    "FLAC__STREAM_ENCODER_INIT_STATUS_BLOCK_SIZE_TOO_SMALL_FOR_LPC_ORDER",
    "FLAC__STREAM_ENCODER_INIT_STATUS_NOT_STREAMABLE", "FLAC__STREAM_ENCODER_INIT_STATUS_INVALID_METADATA",
    "FLAC__STREAM_ENCODER_INIT_STATUS_ALREADY_INITIALIZED",
]

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { self.indices.contains(index) ? self[index] : nil }
}
