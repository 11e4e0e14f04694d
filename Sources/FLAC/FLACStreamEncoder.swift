// SPDX-License-Identifier: GPL-3.0-or-later

import CFLAC

/// A FLAC stream encoder over libFLAC, as `mpd`'s flac encoder plugin: 8, 16 or 24 bits (24 in 32-bit words)
/// interleaved input at `compression` 0…8, native FLAC or Ogg FLAC, written as it is produced (no seeking back
/// to finish the STREAMINFO, as for a live stream). An Ogg FLAC stream can be restarted as a chained logical
/// stream whose Vorbis comment carries a song's tags.
///
/// Confined to one thread (the output thread). The widening buffer and the output are sized once for the
/// largest write seen. Unsafe: the `FLAC__StreamEncoder` pointer never leaves this class.
public final class FLACStreamEncoder {
    private let encoder: UnsafeMutablePointer<FLAC__StreamEncoder>
    private let channels: Int
    private let bitsPerSample: Int
    private let bytesPerSample: Int
    private let sampleRate: Int
    private let compression: Int
    private let ogg: Bool
    private let sink = EncoderSink()
    private var samples: [Int32] = []

    /// Sets libFLAC up and starts the stream (its `fLaC` marker and STREAMINFO, or their Ogg pages, come out
    /// first).
    ///
    /// - Parameters:
    ///   - bitsPerSample: 8, 16 or 24 (input samples of 1, 2 or 4 bytes).
    ///   - ogg: Ogg FLAC rather than native FLAC.
    /// - Throws: `FLACError.library` with `mpd`'s wording when libFLAC refuses a setting.
    public init(
        channels: Int, bitsPerSample: Int, sampleRate: Int, compression: Int, ogg: Bool = false
    ) throws(FLACError) {
        guard let encoder = FLAC__stream_encoder_new() else {
            throw .library(function: "FLAC__stream_encoder_new() failed", status: "")
        }
        self.encoder = encoder
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.bytesPerSample = bitsPerSample == 24 ? 4 : bitsPerSample / 8
        self.sampleRate = sampleRate
        self.compression = compression
        self.ogg = ogg
        do throws(FLACError) {
            try self.start(comments: nil)
        } catch {
            FLAC__stream_encoder_delete(encoder)
            throw error
        }
    }

    /// Applies the settings and initializes the (finished or new) encoder, with a Vorbis comment block when
    /// `comments` are given.
    private func start(comments: [(name: String, value: String)]?) throws(FLACError) {
        func check(_ ok: FLAC__bool, _ what: String) throws(FLACError) {
            guard ok != 0 else { throw .library(function: what, status: "") }
        }
        try check(
            FLAC__stream_encoder_set_compression_level(self.encoder, UInt32(self.compression)),
            "error setting flac compression to \(self.compression)")
        try check(
            FLAC__stream_encoder_set_channels(self.encoder, UInt32(self.channels)),
            "error setting flac channels num to \(self.channels)")
        try check(
            FLAC__stream_encoder_set_bits_per_sample(self.encoder, UInt32(self.bitsPerSample)),
            "error setting flac bit format to \(self.bitsPerSample)")
        try check(
            FLAC__stream_encoder_set_sample_rate(self.encoder, UInt32(self.sampleRate)),
            "error setting flac sample rate to \(self.sampleRate)")
        if self.ogg {
            try check(
                FLAC__stream_encoder_set_ogg_serial_number(self.encoder, Int.random(in: 1...Int(Int32.max))),
                "error setting ogg serial number")
        }
        var metadata: UnsafeMutablePointer<FLAC__StreamMetadata>?
        if let comments, let block = FLAC__metadata_object_new(FLAC__METADATA_TYPE_VORBIS_COMMENT) {
            for (name, value) in comments {
                var entry = FLAC__StreamMetadata_VorbisComment_Entry()
                if FLAC__metadata_object_vorbiscomment_entry_from_name_value_pair(&entry, name, value) != 0 {
                    // The block takes the entry's bytes (`copy` false).
                    _ = FLAC__metadata_object_vorbiscomment_append_comment(block, entry, 0)
                }
            }
            metadata = block
            var blocks: UnsafeMutablePointer<FLAC__StreamMetadata>? = block
            _ = FLAC__stream_encoder_set_metadata(self.encoder, &blocks, 1)
        }
        defer { if let metadata { FLAC__metadata_object_delete(metadata) } }
        // The encoder owns the sink for its whole life, so libFLAC's client pointer stays valid.
        let client = Unmanaged.passUnretained(self.sink).toOpaque()
        // A restart (comments given) is always an Ogg FLAC stream, as mpd's: a native stream restarted for a
        // tag (the recorder output tags every encoder) goes on as Ogg FLAC, with libFLAC's default serial.
        let status =
            self.ogg || comments != nil
            ? FLAC__stream_encoder_init_ogg_stream(self.encoder, nil, flacWrite, nil, nil, nil, client)
            : FLAC__stream_encoder_init_stream(self.encoder, flacWrite, nil, nil, nil, client)
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK else {
            throw .library(
                function: "failed to initialize encoder",
                status: initStatusNames[safe: Int(status.rawValue)] ?? "\(status.rawValue)")
        }
    }

    /// Starts a chained logical stream (Ogg FLAC, after ``finish()``) whose Vorbis comment carries `comments`.
    ///
    /// - Throws: `FLACError.library` when libFLAC refuses.
    public func restart(comments: [(name: String, value: String)]) throws(FLACError) {
        try self.start(comments: comments)
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
