// SPDX-License-Identifier: GPL-3.0-or-later

import CExpat

/// One thing expat reports while it parses a document.
public enum XMLEvent: Sendable, Hashable {
    /// An element starts: its name and its attributes in document order.
    case start(name: String, attributes: [XMLAttribute])
    /// An element ends.
    case end(name: String)
    /// Character data, in the pieces expat reports it (it splits at line ends, references and buffer
    /// boundaries; `mpd`'s RSS plugin keeps each piece as a tag value of its own).
    case text([UInt8])
}

/// An attribute of a start tag.
public struct XMLAttribute: Sendable, Hashable {
    /// The name.
    public var name: String
    /// The value.
    public var value: String

    /// Creates an attribute.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A document expat refused, with its message (`XML_ErrorString`).
public struct XMLError: Error, Sendable, Hashable {
    /// expat's description of the error.
    public var message: String
}

/// Parsing through libexpat, as `mpd`'s `ExpatParser` does; the only importer of CExpat. Any thread.
public enum XMLEvents {
    /// The bytes `mpd` hands expat at a time when it parses a stream (it reads 4096 at once): the same
    /// chunks make expat split character data at the same places.
    public static let chunkSize = 4096

    /// Every event of `document`, fed to expat in `chunkSize` pieces and then finished, as `mpd` parses
    /// a playlist.
    ///
    /// - Throws: `XMLError` when the document is not well-formed (`mpd` then drops everything parsed).
    public static func events(of document: [UInt8]) throws(XMLError) -> [XMLEvent] {
        let parser = XMLStreamParser()
        var events: [XMLEvent] = []
        var offset = 0
        while offset < document.count {
            let end = min(offset + Self.chunkSize, document.count)
            let parsed = document[offset..<end].withUnsafeBytes { chunk in
                Result { () throws(XMLError) in try parser.parse(chunk) }
            }
            events += try parsed.get()
            offset = end
        }
        events += try parser.finish()
        return events
    }
}

/// A document parsed piece by piece as it arrives, as `mpd`'s `ExpatParser` is fed from a transfer: each call
/// returns the events of the bytes given. With a namespace separator, element names in a namespace are the
/// namespace's URI, the separator and the local name (`DAV:|response` for `mpd`'s `'|'`), as expat's
/// `XML_ParserCreateNS` makes them.
///
/// Confined to one thread at a time; not reusable after an error or ``finish()``.
public final class XMLStreamParser {
    private let parser: XML_Parser?
    private let collector = Collector()

    /// A parser; `namespaceSeparator` (an ASCII character) turns namespace processing on.
    public init(namespaceSeparator: Character? = nil) {
        if let separator = namespaceSeparator?.asciiValue {
            self.parser = XML_ParserCreateNS(nil, XML_Char(bitPattern: separator))
        } else {
            self.parser = XML_ParserCreate(nil)
        }
        guard let parser = self.parser else { return }
        // Unmanaged: the collector lives as long as this object, which frees the parser in deinit.
        XML_SetUserData(parser, Unmanaged.passUnretained(self.collector).toOpaque())
        XML_SetElementHandler(parser, startHandler, endHandler)
        XML_SetCharacterDataHandler(parser, textHandler)
    }

    deinit {
        if let parser = self.parser { XML_ParserFree(parser) }
    }

    /// The events of the next piece of the document.
    ///
    /// - Throws: `XMLError` when what has come so far is not well-formed.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(XMLError) -> [XMLEvent] {
        try self.feed(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), last: false)
    }

    /// The events of the document's end (none but what expat held back).
    ///
    /// - Throws: `XMLError` when the document is incomplete or empty (`no element found`).
    public func finish() throws(XMLError) -> [XMLEvent] {
        try self.feed(nil, 0, last: true)
    }

    private func feed(_ bytes: UnsafePointer<CChar>?, _ count: Int32, last: Bool) throws(XMLError) -> [XMLEvent] {
        guard let parser = self.parser else { throw XMLError(message: "out of memory") }
        let status = XML_Parse(parser, bytes, count, last ? 1 : 0)
        let events = self.collector.events
        self.collector.events.removeAll(keepingCapacity: true)
        guard status == XML_STATUS_OK else {
            throw XMLError(
                message: XML_ErrorString(XML_GetErrorCode(parser)).map { String(cString: $0) } ?? "XML error")
        }
        return events
    }
}

/// What the callbacks gather. Only the parsing thread touches it.
private final class Collector {
    var events: [XMLEvent] = []

    static func from(_ userData: UnsafeMutableRawPointer?) -> Collector {
        Unmanaged<Collector>.fromOpaque(userData!).takeUnretainedValue()
    }
}

/// Called by expat on the parsing thread.
private let startHandler: XML_StartElementHandler = { userData, name, attributes in
    var list: [XMLAttribute] = []
    if let attributes {
        var index = 0
        while let key = attributes[index], let value = attributes[index + 1] {
            list.append(XMLAttribute(name: String(cString: key), value: String(cString: value)))
            index += 2
        }
    }
    Collector.from(userData).events.append(.start(name: name.map { String(cString: $0) } ?? "", attributes: list))
}

/// Called by expat on the parsing thread.
private let endHandler: XML_EndElementHandler = { userData, name in
    Collector.from(userData).events.append(.end(name: name.map { String(cString: $0) } ?? ""))
}

/// Called by expat on the parsing thread.
private let textHandler: XML_CharacterDataHandler = { userData, text, length in
    guard let text, length > 0 else { return }
    let bytes = UnsafeRawBufferPointer(start: text, count: Int(length))
    Collector.from(userData).events.append(.text(Array(bytes)))
}
