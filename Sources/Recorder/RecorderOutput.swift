// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Glibc
import Model
import Playback
import Posix

/// `type "recorder"`: writes what is played, encoded (`encoder`, default `vorbis`, with its keys), to a file, as
/// `mpd`'s recorder output: `path` is written from each open to each close (replaced when it exists, named only once complete);
/// `format_path` is a tag template (``TagTemplate``) made into a file name at each song or stream title, a new
/// file begun whenever the name changes, nothing recorded while it makes none. Not paced (as `mpd`'s).
///
/// Used on its output thread only. `@unchecked Sendable`: the encoder and the file are confined to it. The file
/// is written where the encoder's bytes come out (`write(2)`, no allocation per period); errors close the stream.
final class RecorderOutput: AudioOutput, @unchecked Sendable {
    let plugin = "recorder"

    private let prepared: any PreparedEncoder
    private let fixedPath: String?
    private let template: String?
    private let home: String
    private var encoder: (any Encoder)?
    private var file: Int32 = -1
    /// Whether `file` is unnamed until complete (``UnnamedFile``), and the name it gets then.
    private var unnamed = false
    private var filePath = ""
    /// The file being written (`format_path`).
    private var currentPath: String?
    /// The format the encoder was opened in, for reopening it on a new file.
    private var format: AudioFormat?

    init(prepared: any PreparedEncoder, path: String?, template: String?, home: String) {
        self.prepared = prepared
        self.fixedPath = path
        self.template = template
        self.home = home
    }

    deinit { self.close() }

    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        self.close()
        let opened: (encoder: any Encoder, format: AudioFormat)
        do { opened = try self.prepared.open(format) } catch { throw OutputError(error.message) }
        self.format = opened.format
        if let path = self.fixedPath {
            try self.create(path)
            self.encoder = opened.encoder
            try self.drainEncoder()
        }
        // With format_path, the file and the encoder wait for the first tag.
        return opened.format
    }

    func close() {
        self.finishFile()
        self.format = nil
    }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let encoder = self.encoder, self.file >= 0 else { return data.count }
        do { try encoder.write(data) } catch { throw OutputError(error.message) }
        try self.drainEncoder()
        return data.count
    }

    func sendTag(_ tags: [TagItem]) {
        if let template = self.template {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            guard let text = TagTemplate.format(template, tags: tags, now: now.tv_sec), !text.isEmpty else {
                self.finishFile()
                return
            }
            guard let path = RecorderOutputPlugin.expand(text, home: self.home) else {
                self.finishFile()
                return
            }
            if path != self.currentPath {
                self.finishFile()
                guard let format = self.format else { return }
                do throws(OutputError) {
                    let opened: (encoder: any Encoder, format: AudioFormat)
                    do { opened = try self.prepared.open(format) } catch { throw OutputError(error.message) }
                    try self.create(path)
                    self.encoder = opened.encoder
                    self.currentPath = path
                    try self.drainEncoder()
                } catch {
                    self.finishFile()
                    return
                }
            }
        }
        // As mpd's recorder: every encoder is told (a FLAC stream goes on as Ogg FLAC with the tags).
        guard let encoder = self.encoder, self.file >= 0 else { return }
        try? encoder.preTag()
        try? self.drainEncoder()
        try? encoder.sendTag(tags)
    }

    /// Opens the file that becomes `path` when complete (as `mpd`'s: unnamed until then where the file system
    /// allows), mode 0666 less the umask.
    private func create(_ path: String) throws(OutputError) {
        do {
            (self.file, self.unnamed) = try UnnamedFile.create(path)
        } catch {
            throw OutputError("Failed to create \"\(path)\": \(error.errno)")
        }
        self.filePath = path
    }

    /// Writes what the encoder has ready to the file.
    private func drainEncoder() throws(OutputError) {
        guard let encoder = self.encoder, self.file >= 0 else { return }
        let file = self.file
        var failure: Int32 = 0
        encoder.read { bytes in
            guard failure == 0, var start = bytes.baseAddress else { return }
            var left = bytes.count
            while left > 0 {
                let written = Glibc.write(file, start, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                start += written
                left -= written
            }
        }
        if failure != 0 {
            throw OutputError("Failed to write to file: \(String(cString: strerror(failure)))")
        }
    }

    /// Ends the encoder's stream, writes the rest, names the file and closes it.
    private func finishFile() {
        if let encoder = self.encoder, self.file >= 0 {
            try? encoder.end()
            try? self.drainEncoder()
        }
        if self.file >= 0, self.unnamed { try? UnnamedFile.commit(self.file, to: self.filePath) }
        if self.file >= 0 { Glibc.close(self.file) }
        self.file = -1
        self.encoder = nil
        self.currentPath = nil
    }
}

/// The `recorder` output plugin: `path` or `format_path`, and the encoder's keys. No hardware mixer. Any thread.
public struct RecorderOutputPlugin: OutputPlugin {
    /// `recorder`.
    public let name = "recorder"

    private let home: String

    /// The plugin; `~` in paths is `home`.
    public init(home: String) { self.home = home }

    /// - Throws: `'path' not configured`, `Cannot have both 'path' and 'format_path'`, `not an absolute path: x`,
    ///   or the encoder's message.
    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let prepared: any PreparedEncoder
        do { prepared = try EncoderPlugins.configured(configuration.parameters) } catch {
            throw OutputError(error.message)
        }
        let path = configuration.parameters["path"]
        let template = configuration.parameters["format_path"]
        if path == nil && template == nil { throw OutputError("'path' not configured") }
        if path != nil && template != nil { throw OutputError("Cannot have both 'path' and 'format_path'") }
        var expanded: String?
        if let path {
            guard let value = Self.expand(path, home: self.home) else {
                throw OutputError("not an absolute path: \(path)")
            }
            expanded = value
        }
        return RecorderOutput(prepared: prepared, path: expanded, template: template, home: self.home)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }

    /// `mpd`'s `ParsePath`: `~` and `~/…` in `home`, `~user/…` in that user's; otherwise absolute, or `nil`.
    static func expand(_ text: String, home: String) -> String? {
        guard text.hasPrefix("~") else { return text.hasPrefix("/") ? text : nil }
        let afterTilde = text.dropFirst()
        let user = afterTilde.prefix { $0 != "/" }
        let rest = afterTilde.dropFirst(user.count)
        if user.isEmpty { return home + rest }
        return UserDatabase.homeDirectory(ofUser: String(user)).map { $0 + rest }
    }
}
