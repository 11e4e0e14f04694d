// SPDX-License-Identifier: GPL-3.0-or-later

import CAO
import DynamicLibrary
import Glibc
import Model
import Playback
import Posix

/// libao, loaded when the configuration first names an ao output and kept loaded.
///
/// The `fermata` binary does not link libao: with its driver plugins (which load libpulse, libsndio…) it would
/// cost every server memory that only ao outputs use. The first ao output made from the configuration opens it
/// (`dlopen`, Debian's soname), resolves every function the wrapper calls into a table and calls
/// `ao_initialize` (once: as `mpd`, which initialises libao when it makes its first ao output, it is never shut
/// down while outputs exist, and Fermata's live as long as the server).
///
/// When it cannot be loaded (not installed, a missing function), the ao outputs are made without checking
/// their driver, every enable fails, and the reason is reported once, on stderr.
public final class AOLibrary: Sendable {
    /// The process's library: Debian's soname, `libao.so.4`.
    public static let shared = AOLibrary(soname: AOLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_AO_SONAME

    private let library: DynamicLibraries<fermata_ao_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "ao: output unavailable: ",
            fill: { table, handles in fermata_ao_resolve(table, handles[0]) },
            // libao's global set-up (its configuration files, its driver plugins), once per load.
            configure: { functions in functions.ao_initialize() }, reportFailure: reportFailure,
            // Its driver plugins (alsa, pulse…) call libao's functions without linking it.
            global: true)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many ao outputs use it now.
    public var users: Int { self.library.users }
    /// How many times it was loaded.
    public var loadCount: Int { self.library.loadCount }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_ao_functions { try self.library.acquire() }

    fileprivate func release() { self.library.release() }
}

/// `type "ao"`: plays through libao's live driver `driver`, as `mpd`'s ao output: 8- and 16-bit samples as they
/// are, every other sample format converted to 16 bits, any rate and channel count (libao's driver converts or
/// refuses), written in pieces of at most `write_size` bytes (whole frames, at least one). libao's `ao_play`
/// blocks until the driver takes the data, which paces the output; it has no pause (a pause closes the device,
/// as `mpd`'s), no delay and no cancel, and `ao_close` plays out what the driver holds.
///
/// Used on its output thread. `@unchecked Sendable`: the libao device is confined to the output thread; the
/// driver number and the option list are set when the output is made and only read after. Unsafe: the libao
/// pointers never leave this class. The output holds one use of its `AOLibrary` (loaded when the output was
/// made) for its lifetime.
final class AOOutput: AudioOutput, @unchecked Sendable {
    let plugin = "ao"

    private let library: AOLibrary
    /// libao's functions, the driver's number and the driver's options; `nil` when libao could not be loaded.
    private let api: fermata_ao_functions?
    private let driver: Int32
    private let options: UnsafeMutablePointer<ao_option>?
    private let writeSize: Int
    /// The device while a stream is open.
    private var device: OpaquePointer?
    private var frameSize = 1

    /// An output on libao's `driver` with `options` (a list it now owns), holding one use of `library`; with no
    /// `api`, an output that fails to enable.
    fileprivate init(
        library: AOLibrary, api: fermata_ao_functions?, driver: Int32, options: UnsafeMutablePointer<ao_option>?,
        writeSize: Int
    ) {
        self.library = library
        self.api = api
        self.driver = driver
        self.options = options
        self.writeSize = writeSize
    }

    deinit {
        self.close()
        if let api {
            api.ao_free_options(self.options)
            self.library.release()
        }
    }

    /// - Throws: `OutputError` when libao could not be loaded (the reason was reported once by the library).
    func enable() throws(OutputError) {
        guard self.api != nil else { throw OutputError("libao could not be loaded") }
    }

    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        guard let api = self.api else { throw OutputError("libao could not be loaded") }
        self.close()
        var opened = format
        var sampleFormat = ao_sample_format()
        switch format.sampleFormat {
        case .s8: sampleFormat.bits = 8
        case .s16: sampleFormat.bits = 16
        default:
            // As mpd: libao's 24-bit support is not relied on; everything else goes to 16 bits.
            opened.sampleFormat = .s16
            sampleFormat.bits = 16
        }
        sampleFormat.rate = Int32(opened.sampleRate)
        sampleFormat.channels = Int32(opened.channels)
        sampleFormat.byte_format = AO_FMT_NATIVE
        guard let device = api.ao_open_live(self.driver, &sampleFormat, self.options) else {
            throw Self.error(errno: Errno.current)
        }
        self.device = device
        self.frameSize = opened.frameSize
        return opened
    }

    func close() {
        guard let api = self.api, let device = self.device else { return }
        _ = api.ao_close(device)
        self.device = nil
    }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let api = self.api, let device = self.device, let base = data.baseAddress else {
            throw OutputError("ao output not open")
        }
        let count = Self.pieceSize(data.count, writeSize: self.writeSize, frameSize: self.frameSize)
        // libao's prototype takes a mutable pointer; it only reads the samples.
        let samples = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self))
        guard api.ao_play(device, samples, UInt32(count)) != 0 else { throw Self.error(errno: Errno.current) }
        return count
    }

    /// How much of `available` bytes one `ao_play` writes: all of it up to `writeSize`, else `writeSize` rounded
    /// down to whole frames, and at least one frame.
    static func pieceSize(_ available: Int, writeSize: Int, frameSize: Int) -> Int {
        guard available > writeSize else { return available }
        return max(writeSize / frameSize * frameSize, frameSize)
    }

    /// `mpd`'s message for libao's failure `errno` (libao's `AO_E…` numbers, and their `strerror` text, as `mpd`
    /// words them).
    static func error(errno: Errno) -> OutputError {
        let what: String
        switch errno.rawValue {
        case AO_ENODRIVER: what = "No such libao driver"
        case AO_ENOTLIVE: what = "This driver is not a libao live device"
        case AO_EBADOPTION: what = "Invalid libao option"
        case AO_EOPENDEVICE: what = "Cannot open the libao device"
        case AO_EFAIL: what = "Generic libao failure"
        default: what = "Unknown libao failure"
        }
        return OutputError("\(what): \(errno)")
    }
}

/// The `ao` output plugin, with `mpd`'s keys: `driver` (a libao driver's short name, or `default`: libao's
/// default driver), `options` (`key=value` pairs separated by `;`, given to the driver) and `write_size` (bytes
/// per `ao_play`, default 1024). No hardware mixer.
///
/// Making an output loads libao (the driver is checked against libao's list, as `mpd` checks it at start-up).
public struct AOOutputPlugin: OutputPlugin {
    public let name = "ao"
    private let library: AOLibrary
    private let logger: Logger

    /// Creates the plugin; its first output loads `library`.
    public init(library: AOLibrary = .shared, logger: Logger = .discarding) {
        self.library = library
        self.logger = logger.labelled("ao_output")
    }

    /// The `options` value split as `mpd` splits it: on `;`, each piece trimmed of spaces, then at its first `=`.
    ///
    /// - Throws: `problems parsing option "PIECE"` for a piece with no `=` or nothing before it (an empty piece
    ///   too, such as after a final `;`).
    static func parseOptions(_ value: String) throws(OutputError) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        for piece in value.split(separator: ";", omittingEmptySubsequences: false) {
            let trimmed = piece.trimmingSpaces
            guard let equals = trimmed.firstIndex(of: "="), equals != trimmed.startIndex else {
                throw OutputError("problems parsing option \"\(trimmed)\"")
            }
            pairs.append((String(trimmed[..<equals]), String(trimmed[trimmed.index(after: equals)...])))
        }
        return pairs
    }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let writeSize = Int(try configuration.positive("write_size", default: 1024))
        let driverName = configuration.parameters["driver"] ?? "default"
        let api: fermata_ao_functions
        do {
            api = try self.library.acquire()
        } catch {
            _ = try configuration.parameters["options"].map { (value) throws(OutputError) in
                try Self.parseOptions(value)
            }
            return AOOutput(library: self.library, api: nil, driver: -1, options: nil, writeSize: writeSize)
        }
        // As mpd: the driver, then its information, then the options.
        let driver = driverName == "default" ? api.ao_default_driver_id() : api.ao_driver_id(driverName)
        guard driver >= 0 else {
            self.library.release()
            throw OutputError("\"\(driverName)\" is not a valid ao driver")
        }
        guard let info = api.ao_driver_info(driver) else {
            self.library.release()
            throw OutputError("problems getting driver info")
        }
        let shortName = info.pointee.short_name.map { String(cString: $0) } ?? ""
        self.logger.debug("using ao driver \"\(shortName)\" for \"\(configuration.name)\"")
        let options: [(key: String, value: String)]
        do throws(OutputError) {
            options =
                try configuration.parameters["options"].map { (value) throws(OutputError) in
                    try Self.parseOptions(value)
                } ?? []
        } catch {
            self.library.release()
            throw error
        }
        var list: UnsafeMutablePointer<ao_option>?
        for (key, value) in options { _ = api.ao_append_option(&list, key, value) }
        return AOOutput(library: self.library, api: api, driver: driver, options: list, writeSize: writeSize)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}

extension Substring {
    /// Without the spaces and control characters at either end (`mpd`'s `Strip`: bytes up to 0x20).
    fileprivate var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { ($0.asciiValue ?? 0x7F) <= 0x20 }
        guard let first = self.firstIndex(where: { !isSpace($0) }) else { return self[self.endIndex...] }
        let last = self.lastIndex(where: { !isSpace($0) }) ?? first
        return self[first...last]
    }
}
