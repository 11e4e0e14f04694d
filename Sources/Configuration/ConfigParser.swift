// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// Reads a configuration file and the files it includes into one ordered list of parameters and blocks.
///
/// Does blocking file I/O; used once at start-up. Not shared between threads.
struct ConfigParser {
    /// The parameters read so far, in reading order.
    private(set) var parameters: [ConfigParameter] = []

    /// The blocks read so far, in reading order.
    private(set) var blocks: [ConfigBlock] = []

    /// Where each non-repeatable block was first defined.
    private var singleBlocks: [String: ConfigLocation] = [:]

    /// The canonical paths of the files being read, outermost first, to catch include cycles.
    private var openFiles: [String] = []

    /// The `include` lines being followed, outermost first.
    private var includeLines: [ConfigLocation] = []

    // MARK: - Files

    /// Reads the file at `path` and everything it includes.
    ///
    /// - Throws: ``ConfigError`` with line 0 when the file cannot be read, or the first problem inside it.
    mutating func parseFile(atPath path: String) throws(ConfigError) {
        switch Self.read(path) {
        case .success(let bytes): try self.parse(bytes, path: path)
        case .failure(let failure): throw ConfigError(file: path, line: 0, message: failure.message)
        }
    }

    /// Parses `bytes` as the contents of the file at `path`, following its includes relative to `path`.
    mutating func parse(_ bytes: [UInt8], path: String) throws(ConfigError) {
        self.openFiles.append(Self.canonical(path))
        defer { self.openFiles.removeLast() }

        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }

        var block: ConfigBlock? = nil
        for (offset, text) in lines.enumerated() {
            let number = offset + 1
            var scanner = ConfigLineScanner(text)
            let line: ConfigLineScanner.Line
            do {
                line = try scanner.readLine(insideBlock: block != nil)
            } catch {
                throw self.error(path, number, error.message)
            }
            switch line {
            case .blank:
                break
            case .parameter(let name, let value):
                let parameter = ConfigParameter(name: name, value: value, file: path, line: number)
                if var open = block {
                    if let first = open.parameter(named: name) {
                        throw self.error(path, number, "\"\(name)\" is duplicate, first defined on line \(first.line)")
                    }
                    open.params.append(parameter)
                    block = open
                } else {
                    self.parameters.append(parameter)
                }
            case .openBlock(let name):
                try self.checkNotRedefined(name, at: ConfigLocation(file: path, line: number))
                block = ConfigBlock(name: name, file: path, line: number)
            case .closeBlock:
                if let open = block { self.blocks.append(open) }
                block = nil
            case .include(let pattern, let isOptional):
                try self.include(pattern, isOptional: isOptional, from: ConfigLocation(file: path, line: number))
            }
        }
        if block != nil {
            throw self.error(path, lines.count, "Expected '}' before end-of-file")
        }
    }

    // MARK: - Includes

    /// The deepest chain of nested includes accepted; `mpd` has no limit and crashes on a cycle.
    static let maximumIncludeDepth = 16

    private mutating func include(_ pattern: String, isOptional: Bool, from location: ConfigLocation)
        throws(ConfigError)
    {
        let resolved = ConfigIncludePattern(pattern, includingFile: location.file)
        let paths: [String]
        switch resolved.expand(isOptional: isOptional) {
        case .success(let found): paths = found
        case .failure(let failure): throw self.error(location.file, location.line, failure.message)
        }
        for path in paths {
            if self.openFiles.contains(Self.canonical(path)) {
                throw self.error(location.file, location.line, "include cycle: '\(path)' is already being read")
            }
            if self.includeLines.count >= Self.maximumIncludeDepth {
                throw self.error(
                    location.file, location.line, "too many nested includes (more than \(Self.maximumIncludeDepth))")
            }
            let bytes: [UInt8]
            switch Self.read(path) {
            case .success(let read):
                bytes = read
            case .failure(let failure):
                if isOptional && failure.isMissing { continue }
                throw self.error(location.file, location.line, failure.message)
            }
            self.includeLines.append(location)
            defer { self.includeLines.removeLast() }
            try self.parse(bytes, path: path)
        }
    }

    // MARK: - Checks

    private mutating func checkNotRedefined(_ name: String, at location: ConfigLocation) throws(ConfigError) {
        guard let option = ConfigOption.named(name), !option.isRepeatable else { return }
        guard let first = self.singleBlocks[name] else {
            self.singleBlocks[name] = location
            return
        }
        let firstPlace = first.file == location.file ? "line \(first.line)" : "line \(first.line) of \(first.file)"
        throw self.error(
            location.file, location.line,
            "config parameter \"\(name)\" is first defined on \(firstPlace) and redefined on line \(location.line)")
    }

    private func error(_ file: String, _ line: Int, _ message: String) -> ConfigError {
        ConfigError(
            location: ConfigLocation(file: file, line: line), message: message,
            includedFrom: self.includeLines.reversed())
    }

    // MARK: - Reading

    /// Why a file could not be read, in `mpd`'s words.
    struct ReadFailure: Error {
        /// The message, e.g. `Failed to open '/x': No such file or directory`.
        var message: String
        /// Whether the file does not exist, which `include_optional` tolerates.
        var isMissing: Bool
    }

    /// Reads a whole file.
    static func read(_ path: String) -> Result<[UInt8], ReadFailure> {
        guard let status = try? FileStatus(path: path) else {
            return .failure(
                ReadFailure(message: "Failed to open '\(path)': No such file or directory", isMissing: true))
        }
        if status.kind == .directory {
            return .failure(ReadFailure(message: "Failed to read from \(path): Is a directory", isMissing: false))
        }
        do {
            return .success(try readFile(atPath: path))
        } catch {
            let reason = error.errno == .permissionDenied ? "Permission denied" : "Input/output error"
            return .failure(ReadFailure(message: "Failed to open '\(path)': \(reason)", isMissing: false))
        }
    }

    /// An absolute path with `.`, `..` and symbolic links resolved, to recognise a file met twice; a path that does
    /// not resolve (no such file) as it is.
    private static func canonical(_ path: String) -> String {
        DirectoryEntries.realPath(path) ?? path
    }
}
