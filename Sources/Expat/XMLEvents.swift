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
        guard let parser = XML_ParserCreate(nil) else { return [] }
        defer { XML_ParserFree(parser) }
        let collector = Collector()
        // Unmanaged: the collector outlives the parser, which is freed before this function returns.
        XML_SetUserData(parser, Unmanaged.passUnretained(collector).toOpaque())
        XML_SetElementHandler(parser, startHandler, endHandler)
        XML_SetCharacterDataHandler(parser, textHandler)
        var offset = 0
        while offset < document.count {
            let length = min(Self.chunkSize, document.count - offset)
            let status = document.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.advanced(by: offset).withMemoryRebound(to: CChar.self, capacity: length) {
                    XML_Parse(parser, $0, Int32(length), 0)
                }
            }
            guard status == XML_STATUS_OK else { throw Self.error(parser) }
            offset += length
        }
        guard XML_Parse(parser, "", 0, 1) == XML_STATUS_OK else { throw Self.error(parser) }
        return collector.events
    }

    private static func error(_ parser: XML_Parser) -> XMLError {
        XMLError(message: XML_ErrorString(XML_GetErrorCode(parser)).map { String(cString: $0) } ?? "XML error")
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
