// SPDX-License-Identifier: GPL-3.0-or-later

import CFLAC
import Glibc
import Input

/// A libFLAC stream decoder reading native FLAC or Ogg FLAC through an `InputStream`, delivering interleaved
/// integer PCM.
///
/// Thread confinement: create it on the thread that decodes and use it only there (it is not `Sendable`).
/// Opening reads the metadata (allocating); `read(into:)` and `seek(toSample:)` do not allocate: the write
/// callback interleaves libFLAC's per-channel buffers straight into the caller's buffer, and keeps what does
/// not fit in a buffer sized at open from STREAMINFO's maximum block size for the next call.
public final class FLACStreamDecoder {
    /// Metadata blocks besides STREAMINFO (always read) that `metadata` should collect.
    public struct MetadataTypes: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        /// Creates a set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// VORBIS_COMMENT.
        public static let vorbisComment = MetadataTypes(rawValue: 1)
        /// PICTURE.
        public static let picture = MetadataTypes(rawValue: 2)
    }

    /// The audio properties: STREAMINFO's, or (for a non-seekable stream without STREAMINFO) the first frame's
    /// with `totalSamples` 0 and a maximum block size of 65535.
    public var streamInfo: FLACStreamInfo { self.context.streamInfo ?? Self.emptyInfo }
    /// The blocks of the requested `MetadataTypes`, in stream order.
    public var metadata: [FLACMetadataBlock] { self.context.metadata }
    /// Bytes per sample in `read(into:)`'s output: 1 up to 8 bits, 2 up to 16 bits, else 4 (each sample is the
    /// decoded value, not scaled: 24-bit samples are 24-bit values in 32-bit words).
    public var bytesPerSample: Int { self.context.bytesPerSample }
    /// Bytes per interleaved output frame.
    public var frameSize: Int { self.context.bytesPerSample * self.context.channels }
    /// The bit rate in kbit/s of the first FLAC frame that the last `read(into:)` delivered samples of (as an
    /// `mpd` chunk keeps the rate of the first frame written into it), computed as `mpd`'s FLAC plugin does:
    /// the bytes since the end of the previous frame (0 for the first frame after opening or a seek, and for
    /// Ogg FLAC, where libFLAC does not report positions) × 8 × rate / (1000 × samples), kept in 16 bits.
    public private(set) var bitRate = 0
    /// How many errors libFLAC reported and recovered from (lost sync, bad frame headers, CRC mismatches).
    public var recoveredErrors: Int { self.context.errorCount }

    private static let emptyInfo = FLACStreamInfo(
        minBlockSize: 0, maxBlockSize: 0, sampleRate: 0, channels: 0, bitsPerSample: 0, totalSamples: 0)
    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    private let context: DecoderContext

    /// Opens the stream `input` reads from its current offset and reads its metadata; the decoder keeps
    /// `input`.
    ///
    /// - Throws: `FLACError.library` when libFLAC cannot initialise or read the metadata (not a FLAC stream),
    ///   `.missingStreamInfo` for a seekable stream without STREAMINFO, `.frameMismatch` for an impossible
    ///   channel count or depth, `.input` when reading fails.
    public init(
        input: any InputStream, container: FLACMetadata.Container, metadata: MetadataTypes = []
    ) throws(FLACError) {
        guard let decoder = FLAC__stream_decoder_new() else {
            throw .library(function: "FLAC__stream_decoder_new", status: "out of memory")
        }
        self.decoder = decoder
        self.context = DecoderContext(input)
        if metadata.contains(.vorbisComment) {
            FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_VORBIS_COMMENT)
        }
        if metadata.contains(.picture) {
            FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_PICTURE)
        }
        // The decoder owns the context for its whole life, so libFLAC's client pointer stays valid.
        let client = Unmanaged.passUnretained(self.context).toOpaque()
        let status =
            switch container {
            case .native:
                FLAC__stream_decoder_init_stream(
                    decoder, flacRead, flacSeek, flacTell, flacLength, flacEOF, flacWrite, flacMetadata, flacError,
                    client)
            case .ogg:
                FLAC__stream_decoder_init_ogg_stream(
                    decoder, flacRead, flacSeek, flacTell, flacLength, flacEOF, flacWrite, flacMetadata, flacError,
                    client)
            }
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw .library(function: "FLAC__stream_decoder_init_stream", status: initStatusName(status))
        }
        let metadataRead = FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0
        if let failure = self.context.failure { throw .input(failure) }
        // A file that ends within its metadata after STREAMINFO is a song of no frames, as in mpd (its plugin
        // announced the format from STREAMINFO already).
        let endedAfterStreamInfo =
            self.context.streamInfo != nil
            && FLAC__stream_decoder_get_state(decoder) == FLAC__STREAM_DECODER_END_OF_STREAM
        guard metadataRead || endedAfterStreamInfo else {
            throw self.stateError("FLAC__stream_decoder_process_until_end_of_metadata")
        }
        self.context.readingMetadata = false
        if let info = self.context.streamInfo {
            try self.context.configure(
                channels: info.channels, bitsPerSample: info.bitsPerSample,
                maxBlockSize: info.maxBlockSize >= 16 ? info.maxBlockSize : 65535)
        } else {
            // Like mpd: only a stream that cannot seek (sent from the middle) may do without STREAMINFO; its
            // first frame's header tells the format.
            guard !input.isSeekable else { throw .missingStreamInfo }
            self.context.configureFromFirstFrame = true
            let decoded = FLAC__stream_decoder_process_single(decoder) != 0
            self.context.configureFromFirstFrame = false
            if let failure = self.context.failure { throw .input(failure) }
            if let mismatch = self.context.mismatch { throw .frameMismatch("\(mismatch)") }
            guard decoded, self.context.streamInfo != nil else { throw .missingStreamInfo }
        }
    }

    deinit {
        FLAC__stream_decoder_delete(self.decoder)
        self.context.release()
    }

    /// Decodes into `buffer` as many whole interleaved frames (`frameSize` bytes each) as fit: first the frames
    /// kept from the last FLAC frame, then new ones.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the stream (also when libFLAC stops at a truncated frame, as
    ///   `mpd` ends the song there) or when `buffer` holds less than one frame.
    /// - Throws: `FLACError.input` when reading fails, `.frameMismatch` for a frame that does not fit
    ///   STREAMINFO, `.library` when libFLAC fails otherwise; frames decoded before the failure are returned
    ///   first and the error comes with the next call.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FLACError) -> Int {
        let context = self.context
        let frameSize = context.frameSize
        guard frameSize > 0, let base = buffer.baseAddress else { return 0 }
        let capacity = buffer.count / frameSize
        guard capacity > 0 else { return 0 }
        // Kept frames belong to the frame measured last; otherwise the first frame decoded below sets it.
        var rate: UInt16? = context.leftoverFrames > 0 ? context.kbitRate : nil
        var written = context.drainLeftover(into: base, capacity: capacity)
        defer { if let rate { self.bitRate = Int(rate) } }
        while written < capacity {
            let state = FLAC__stream_decoder_get_state(self.decoder)
            if state == FLAC__STREAM_DECODER_END_OF_STREAM { break }
            if state == FLAC__STREAM_DECODER_SEEK_ERROR {
                // As mpd recovers from a failed seek: drop the decoder's buffers and go on from where it is.
                guard FLAC__stream_decoder_flush(self.decoder) != 0 else {
                    throw .library(function: "FLAC__stream_decoder_flush", status: stateName(state))
                }
            } else if state.rawValue > FLAC__STREAM_DECODER_END_OF_STREAM.rawValue {
                if written > 0 { break }
                throw self.failure("FLAC__stream_decoder_process_single")
            }
            context.target = base + written * frameSize
            context.targetCapacity = capacity - written
            context.targetWritten = 0
            let before = written
            let decoded = FLAC__stream_decoder_process_single(self.decoder) != 0
            written += context.targetWritten
            if rate == nil && (written > before || context.leftoverFrames > 0) { rate = context.kbitRate }
            context.target = nil
            context.targetCapacity = 0
            if !decoded {
                let after = FLAC__stream_decoder_get_state(self.decoder)
                if after == FLAC__STREAM_DECODER_END_OF_STREAM { break }
                if written > 0 { break }
                throw self.failure("FLAC__stream_decoder_process_single")
            }
            if context.leftoverFrames > 0 { break }
        }
        return written
    }

    /// Moves to `sample` (samples per channel from the start), exactly: the next `read(into:)` starts with it.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: `sample`.
    /// - Throws: `FLACError.library` when libFLAC cannot seek there (past the end, a stream that cannot seek,
    ///   damage); the decoder then goes on from where libFLAC stopped, as `mpd`'s does.
    @discardableResult
    public func seek(toSample sample: UInt64) throws(FLACError) -> UInt64 {
        let context = self.context
        context.discardLeftover()
        context.target = nil
        context.targetCapacity = 0
        let ok = FLAC__stream_decoder_seek_absolute(self.decoder, sample) != 0
        // As mpd: the frame decoded by the seek was measured from the old position; the next starts afresh.
        context.position = 0
        guard ok else {
            if FLAC__stream_decoder_get_state(self.decoder) == FLAC__STREAM_DECODER_SEEK_ERROR {
                _ = FLAC__stream_decoder_flush(self.decoder)
            }
            context.discardLeftover()
            throw self.failure("FLAC__stream_decoder_seek_absolute")
        }
        return sample
    }

    private func failure(_ function: String) -> FLACError {
        if let failure = self.context.failure { return .input(failure) }
        if let mismatch = self.context.mismatch { return .frameMismatch("\(mismatch)") }
        return self.stateError(function)
    }

    private func stateError(_ function: String) -> FLACError {
        .library(function: function, status: stateName(FLAC__stream_decoder_get_state(self.decoder)))
    }
}

/// What libFLAC's callbacks work on: the input, the metadata seen, and the output buffers.
///
/// Confined to the decoder's thread, like the `FLACStreamDecoder` that owns it.
private final class DecoderContext {
    let input: any InputStream
    var failure: InputError?
    var mismatch: StaticString?
    var readingMetadata = true
    var configureFromFirstFrame = false
    var streamInfo: FLACStreamInfo?
    var metadata: [FLACMetadataBlock] = []
    var errorCount = 0

    var channels = 0
    var bytesPerSample = 0
    var frameSize: Int { self.channels * self.bytesPerSample }
    /// Frames of the last FLAC frame that did not fit the caller's buffer, interleaved in the output format.
    var leftover = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    var leftoverCapacity = 0
    var leftoverStart = 0
    var leftoverFrames = 0
    /// The caller's buffer during `process_single`: where the write callback interleaves first.
    var target: UnsafeMutableRawPointer?
    var targetCapacity = 0
    var targetWritten = 0
    /// mpd's bit rate bookkeeping: the decode position after the previous frame (0: none yet).
    var position: UInt64 = 0
    var kbitRate: UInt16 = 0

    init(_ input: any InputStream) { self.input = input }

    /// Sizes the output for `channels` × `bitsPerSample` and frames of up to `maxBlockSize` samples.
    func configure(channels: Int, bitsPerSample: Int, maxBlockSize: Int) throws(FLACError) {
        guard (1...8).contains(channels) else { throw .frameMismatch("channel count outside 1…8") }
        guard (4...32).contains(bitsPerSample) else { throw .frameMismatch("bits per sample outside 4…32") }
        self.channels = channels
        self.bytesPerSample = bitsPerSample <= 8 ? 1 : (bitsPerSample <= 16 ? 2 : 4)
        self.leftoverCapacity = maxBlockSize
        self.leftover = UnsafeMutableRawBufferPointer.allocate(byteCount: maxBlockSize * self.frameSize, alignment: 16)
    }

    func release() {
        if self.leftover.baseAddress != nil { self.leftover.deallocate() }
    }

    func discardLeftover() {
        self.leftoverStart = 0
        self.leftoverFrames = 0
    }

    /// Copies kept frames into `base` (room for `capacity` frames). Does not allocate.
    func drainLeftover(into base: UnsafeMutableRawPointer, capacity: Int) -> Int {
        guard self.leftoverFrames > 0, let kept = self.leftover.baseAddress else { return 0 }
        let count = min(capacity, self.leftoverFrames)
        let frameSize = self.frameSize
        base.copyMemory(from: kept + self.leftoverStart * frameSize, byteCount: count * frameSize)
        self.leftoverStart += count
        self.leftoverFrames -= count
        if self.leftoverFrames == 0 { self.leftoverStart = 0 }
        return count
    }

    /// The write callback's work for one frame. Does not allocate (except when configuring from a first frame
    /// during opening).
    func write(
        _ decoder: UnsafePointer<FLAC__StreamDecoder>, _ header: FLAC__FrameHeader,
        _ buffers: UnsafePointer<UnsafePointer<FLAC__int32>?>
    ) -> FLAC__StreamDecoderWriteStatus {
        if self.streamInfo == nil {
            guard self.configureFromFirstFrame else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
            do {
                try self.configure(
                    channels: Int(header.channels), bitsPerSample: Int(header.bits_per_sample), maxBlockSize: 65535)
            } catch {
                self.mismatch = "impossible first frame"
                return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
            }
            self.streamInfo = FLACStreamInfo(
                minBlockSize: 0, maxBlockSize: 65535, sampleRate: Int(header.sample_rate),
                channels: Int(header.channels), bitsPerSample: Int(header.bits_per_sample), totalSamples: 0)
        }
        let blockSize = Int(header.blocksize)
        guard Int(header.channels) == self.channels else {
            self.mismatch = "channel count differs from STREAMINFO"
            return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
        }
        let direct = self.target == nil ? 0 : min(blockSize, self.targetCapacity - self.targetWritten)
        guard self.leftoverFrames == 0, blockSize - direct <= self.leftoverCapacity, blockSize > 0 else {
            self.mismatch = "frame larger than STREAMINFO's maximum block size"
            return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
        }
        self.measure(decoder, header)
        if direct > 0, let target = self.target {
            self.interleave(buffers, from: 0, count: direct, into: target + self.targetWritten * self.frameSize)
            self.targetWritten += direct
        }
        if blockSize > direct, let kept = self.leftover.baseAddress {
            self.interleave(buffers, from: direct, count: blockSize - direct, into: kept)
            self.leftoverStart = 0
            self.leftoverFrames = blockSize - direct
        }
        return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
    }

    /// mpd's `GetDeltaPosition` and kbit/s formula (unsigned 64-bit arithmetic, kept in 16 bits).
    private func measure(_ decoder: UnsafePointer<FLAC__StreamDecoder>, _ header: FLAC__FrameHeader) {
        var bytes: UInt64 = 0
        if FLAC__stream_decoder_get_decode_position(decoder, &bytes) == 0 {
            bytes = 0
        } else if self.position > 0 && bytes > self.position {
            bytes -= self.position
            self.position += bytes
        } else {
            self.position = bytes
            bytes = 0
        }
        let rate = bytes &* 8 &* UInt64(header.sample_rate) / (1000 &* UInt64(max(1, header.blocksize)))
        self.kbitRate = UInt16(truncatingIfNeeded: rate)
    }

    /// Interleaves `count` samples per channel from `start` into `destination` in the output width.
    @inline(__always)
    private func interleave(
        _ buffers: UnsafePointer<UnsafePointer<FLAC__int32>?>, from start: Int, count: Int,
        into destination: UnsafeMutableRawPointer
    ) {
        let channels = self.channels
        var offset = 0
        switch self.bytesPerSample {
        case 1:
            for index in start..<(start + count) {
                for channel in 0..<channels {
                    let value = Int8(truncatingIfNeeded: buffers[channel].unsafelyUnwrapped[index])
                    destination.storeBytes(of: value, toByteOffset: offset, as: Int8.self)
                    offset += 1
                }
            }
        case 2:
            for index in start..<(start + count) {
                for channel in 0..<channels {
                    let value = Int16(truncatingIfNeeded: buffers[channel].unsafelyUnwrapped[index])
                    destination.storeBytes(of: value, toByteOffset: offset, as: Int16.self)
                    offset += 2
                }
            }
        default:
            for index in start..<(start + count) {
                for channel in 0..<channels {
                    destination.storeBytes(
                        of: buffers[channel].unsafelyUnwrapped[index], toByteOffset: offset, as: Int32.self)
                    offset += 4
                }
            }
        }
    }
}

// MARK: - libFLAC callbacks (capture-free; the client pointer is the decoder's `DecoderContext`)

private func context(_ client: UnsafeMutableRawPointer?) -> DecoderContext {
    Unmanaged<DecoderContext>.fromOpaque(client.unsafelyUnwrapped).takeUnretainedValue()
}

private let flacRead: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    guard let buffer, let bytes else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    let context = context(client)
    do throws(InputError) {
        let count = try context.input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: bytes.pointee))
        bytes.pointee = count
        return count == 0 ? FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM : FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
    } catch {
        context.failure = error
        bytes.pointee = 0
        return FLAC__STREAM_DECODER_READ_STATUS_ABORT
    }
}

private let flacSeek: FLAC__StreamDecoderSeekCallback = { _, offset, client in
    let context = context(client)
    guard context.input.isSeekable else { return FLAC__STREAM_DECODER_SEEK_STATUS_UNSUPPORTED }
    do {
        try context.input.seek(to: offset)
        return FLAC__STREAM_DECODER_SEEK_STATUS_OK
    } catch {
        return FLAC__STREAM_DECODER_SEEK_STATUS_ERROR
    }
}

private let flacTell: FLAC__StreamDecoderTellCallback = { _, offset, client in
    let context = context(client)
    guard context.input.isSeekable, let offset else { return FLAC__STREAM_DECODER_TELL_STATUS_UNSUPPORTED }
    offset.pointee = context.input.offset
    return FLAC__STREAM_DECODER_TELL_STATUS_OK
}

private let flacLength: FLAC__StreamDecoderLengthCallback = { _, length, client in
    guard let size = context(client).input.size, let length else {
        return FLAC__STREAM_DECODER_LENGTH_STATUS_UNSUPPORTED
    }
    length.pointee = size
    return FLAC__STREAM_DECODER_LENGTH_STATUS_OK
}

private let flacEOF: FLAC__StreamDecoderEofCallback = { _, client in
    context(client).input.isAtEnd ? 1 : 0
}

private let flacWrite: FLAC__StreamDecoderWriteCallback = { decoder, frame, buffers, client in
    guard let decoder, let frame, let buffers else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
    return context(client).write(decoder, frame.pointee.header, buffers)
}

private let flacMetadata: FLAC__StreamDecoderMetadataCallback = { _, block, client in
    guard let block else { return }
    let context = context(client)
    guard context.readingMetadata else { return }
    let parsed = FLACMetadataBlock(block)
    if case .streamInfo(let info) = parsed {
        if context.streamInfo == nil { context.streamInfo = info }
    } else {
        context.metadata.append(parsed)
    }
}

private let flacError: FLAC__StreamDecoderErrorCallback = { _, _, client in
    context(client).errorCount += 1
}

/// libFLAC's names of decoder states (its `FLAC__StreamDecoderStateString` table is not importable).
private func stateName(_ state: FLAC__StreamDecoderState) -> String {
    let names = [
        "SEARCH_FOR_METADATA", "READ_METADATA", "SEARCH_FOR_FRAME_SYNC", "READ_FRAME", "END_OF_STREAM", "OGG_ERROR",
        "SEEK_ERROR", "ABORTED", "MEMORY_ALLOCATION_ERROR", "UNINITIALIZED",
    ]
    let index = Int(state.rawValue)
    return index < names.count ? "FLAC__STREAM_DECODER_" + names[index] : "state \(index)"
}

private func initStatusName(_ status: FLAC__StreamDecoderInitStatus) -> String {
    let names = [
        "OK", "UNSUPPORTED_CONTAINER", "INVALID_CALLBACKS", "MEMORY_ALLOCATION_ERROR", "ERROR_OPENING_FILE",
        "ALREADY_INITIALIZED",
    ]
    let index = Int(status.rawValue)
    return index < names.count ? "FLAC__STREAM_DECODER_INIT_STATUS_" + names[index] : "status \(index)"
}
