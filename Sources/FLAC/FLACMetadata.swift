// SPDX-License-Identifier: GPL-3.0-or-later

import CFLAC
import Glibc
import Input

/// A FLAC STREAMINFO block: the stream's audio properties.
public struct FLACStreamInfo: Sendable, Hashable {
    /// The smallest block size in samples per channel.
    public var minBlockSize: Int
    /// The largest block size in samples per channel (at most 65535).
    public var maxBlockSize: Int
    /// Frames per second (0 when the block says so, which is invalid).
    public var sampleRate: Int
    /// Channels (1…8).
    public var channels: Int
    /// Bits per sample (4…32).
    public var bitsPerSample: Int
    /// Samples per channel in the stream; 0 when unknown.
    public var totalSamples: UInt64

    /// Creates a STREAMINFO value.
    public init(
        minBlockSize: Int, maxBlockSize: Int, sampleRate: Int, channels: Int, bitsPerSample: Int,
        totalSamples: UInt64
    ) {
        self.minBlockSize = minBlockSize
        self.maxBlockSize = maxBlockSize
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.totalSamples = totalSamples
    }

    init(_ info: FLAC__StreamMetadata_StreamInfo) {
        self.init(
            minBlockSize: Int(info.min_blocksize), maxBlockSize: Int(info.max_blocksize),
            sampleRate: Int(info.sample_rate), channels: Int(info.channels), bitsPerSample: Int(info.bits_per_sample),
            totalSamples: info.total_samples)
    }
}

/// A FLAC PICTURE block.
public struct FLACPicture: Sendable, Hashable {
    /// The ID3v2 APIC picture type (3 is the front cover).
    public var type: UInt32
    /// The MIME type bytes (`image/jpeg`; `-->` when `data` is a URL).
    public var mimeType: [UInt8]
    /// The description, UTF-8.
    public var description: [UInt8]
    /// The image bytes.
    public var data: [UInt8]

    /// Creates a picture.
    public init(type: UInt32, mimeType: [UInt8], description: [UInt8], data: [UInt8]) {
        self.type = type
        self.mimeType = mimeType
        self.description = description
        self.data = data
    }
}

/// One metadata block of a FLAC or Ogg FLAC stream, as libFLAC parsed it.
public enum FLACMetadataBlock: Sendable, Hashable {
    /// STREAMINFO.
    case streamInfo(FLACStreamInfo)
    /// VORBIS_COMMENT: the vendor string and every `NAME=value` entry, in stored order.
    case vorbisComment(vendor: [UInt8], entries: [[UInt8]])
    /// PICTURE.
    case picture(FLACPicture)
    /// Any other block (PADDING, APPLICATION, SEEKTABLE, CUESHEET…): its type number.
    case other(type: Int)

    /// Copies a block libFLAC handed over (metadata chain or decoder metadata callback).
    init(_ block: UnsafePointer<FLAC__StreamMetadata>) {
        let metadata = block.pointee
        switch metadata.type {
        case FLAC__METADATA_TYPE_STREAMINFO:
            self = .streamInfo(FLACStreamInfo(metadata.data.stream_info))
        case FLAC__METADATA_TYPE_VORBIS_COMMENT:
            let comment = metadata.data.vorbis_comment
            var entries: [[UInt8]] = []
            if let comments = comment.comments {
                entries.reserveCapacity(Int(comment.num_comments))
                for index in 0..<Int(comment.num_comments) { entries.append(Self.bytes(comments[index])) }
            }
            self = .vorbisComment(vendor: Self.bytes(comment.vendor_string), entries: entries)
        case FLAC__METADATA_TYPE_PICTURE:
            let picture = metadata.data.picture
            let mime = Self.nulTerminated(picture.mime_type)
            let description = Self.nulTerminated(picture.description)
            let data = picture.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(picture.data_length))) } ?? []
            self = .picture(
                FLACPicture(
                    type: picture.type.rawValue, mimeType: mime,
                    description: description, data: data))
        default:
            self = .other(type: Int(metadata.type.rawValue))
        }
    }

    /// The bytes of a NUL-terminated string libFLAC allocated (PICTURE's MIME type and description).
    private static func nulTerminated(_ pointer: UnsafeRawPointer?) -> [UInt8] {
        guard let pointer else { return [] }
        // libFLAC terminates both strings (it reads them with their lengths and appends a NUL).
        let length = strlen(pointer.assumingMemoryBound(to: CChar.self))
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }

    /// An entry's bytes: libFLAC's pointer and length (the entry may contain NULs).
    private static func bytes(_ entry: FLAC__StreamMetadata_VorbisComment_Entry) -> [UInt8] {
        guard let pointer = entry.entry else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: Int(entry.length)))
    }
}

/// Reads the metadata blocks of a stream with libFLAC's level-2 metadata interface (a metadata chain), as
/// `mpd`'s FLAC plugins scan files: native FLAC (an ID3v2 tag in front is skipped by libFLAC) or Ogg FLAC.
///
/// Stateless; any thread (each call uses its own chain and reads only `input`).
public enum FLACMetadata {
    /// The container a FLAC stream comes in.
    public enum Container: Sendable, Hashable {
        /// A native `fLaC` stream.
        case native
        /// FLAC in Ogg.
        case ogg
    }

    /// Every metadata block of the stream `input` reads, from its current offset, in stored order.
    ///
    /// - Throws: `FLACError.library` with the chain status when libFLAC cannot read the metadata (not a FLAC
    ///   stream, a damaged block, truncated metadata); `.input` when reading `input` failed.
    public static func read(input: any InputStream, container: Container) throws(FLACError) -> [FLACMetadataBlock] {
        guard let chain = FLAC__metadata_chain_new() else {
            throw .library(function: "FLAC__metadata_chain_new", status: "out of memory")
        }
        defer { FLAC__metadata_chain_delete(chain) }
        let source = InputSource(input)
        let handle = Unmanaged.passUnretained(source).toOpaque()
        let ok: FLAC__bool
        let function: String
        // The callbacks use `source` only during the call; withExtendedLifetime keeps it alive until then.
        switch container {
        case .native:
            function = "FLAC__metadata_chain_read_with_callbacks"
            ok = withExtendedLifetime(source) { FLAC__metadata_chain_read_with_callbacks(chain, handle, ioCallbacks) }
        case .ogg:
            function = "FLAC__metadata_chain_read_ogg_with_callbacks"
            ok = withExtendedLifetime(source) {
                FLAC__metadata_chain_read_ogg_with_callbacks(chain, handle, ioCallbacks)
            }
        }
        if let failure = source.failure { throw .input(failure) }
        guard ok != 0 else {
            let status = FLAC__metadata_chain_status(chain)
            throw .library(function: function, status: chainStatusName(status))
        }
        guard let iterator = FLAC__metadata_iterator_new() else {
            throw .library(function: "FLAC__metadata_iterator_new", status: "out of memory")
        }
        defer { FLAC__metadata_iterator_delete(iterator) }
        FLAC__metadata_iterator_init(iterator, chain)
        var blocks: [FLACMetadataBlock] = []
        repeat {
            guard let block = FLAC__metadata_iterator_get_block(iterator) else { break }
            blocks.append(FLACMetadataBlock(block))
        } while FLAC__metadata_iterator_next(iterator) != 0
        return blocks
    }

    /// libFLAC's name for a chain status (its `FLAC__Metadata_ChainStatusString` table is not importable).
    private static func chainStatusName(_ status: FLAC__Metadata_ChainStatus) -> String {
        let names = [
            "OK", "ILLEGAL_INPUT", "ERROR_OPENING_FILE", "NOT_A_FLAC_FILE", "NOT_WRITABLE", "BAD_METADATA",
            "READ_ERROR", "SEEK_ERROR", "WRITE_ERROR", "RENAME_ERROR", "UNLINK_ERROR", "MEMORY_ALLOCATION_ERROR",
            "INTERNAL_ERROR", "INVALID_CALLBACKS", "READ_WRITE_MISMATCH", "WRONG_WRITE_CALL",
        ]
        let index = Int(status.rawValue)
        return index < names.count ? "FLAC__METADATA_CHAIN_STATUS_" + names[index] : "status \(index)"
    }
}

/// libFLAC's `FLAC__IOCallbacks` over an `InputSource` (seekable: libFLAC's chain reader needs seek and tell).
private let ioCallbacks = FLAC__IOCallbacks(
    read: { pointer, size, count, handle in
        guard let pointer, let handle, size > 0 else { return 0 }
        let source = Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue()
        let (total, overflow) = size.multipliedReportingOverflow(by: count)
        guard !overflow else { return 0 }
        // libFLAC expects the whole request filled unless the stream ends, and a clean errno afterwards.
        do throws(InputError) {
            let read = try source.input.readFully(into: UnsafeMutableRawBufferPointer(start: pointer, count: total))
            errno = 0
            return read / size
        } catch {
            source.failure = error
            errno = EIO
            return 0
        }
    },
    write: nil,
    seek: { handle, offset, whence in
        guard let handle else { return -1 }
        let source = Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue()
        guard let target = source.target(offset: offset, whence: whence) else { return -1 }
        do {
            try source.input.seek(to: target)
            return 0
        } catch {
            return -1
        }
    },
    tell: { handle in
        guard let handle else { return -1 }
        return Int64(clamping: Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue().input.offset)
    },
    eof: { handle in
        guard let handle else { return 1 }
        return Unmanaged<InputSource>.fromOpaque(handle).takeUnretainedValue().input.isAtEnd ? 1 : 0
    },
    close: { _ in 0 })

/// The input behind libFLAC's I/O callbacks, and the first read error they saw.
final class InputSource {
    let input: any InputStream
    var failure: InputError?

    init(_ input: any InputStream) { self.input = input }

    /// The absolute offset of an `fseek`-style move, or `nil` when it is out of range or the input cannot seek.
    func target(offset: Int64, whence: Int32) -> UInt64? {
        guard self.input.isSeekable else { return nil }
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = Int64(clamping: self.input.offset)
        case SEEK_END:
            guard let size = self.input.size else { return nil }
            base = Int64(clamping: size)
        default: return nil
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return nil }
        return UInt64(target)
    }
}
