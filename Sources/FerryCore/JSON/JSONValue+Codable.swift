import Foundation

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if let whole = Self.wholeNumber(value) {
                try container.encode(whole)
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Why a request body is not JSON Ferry can read.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// The member at fault, when the problem is one member (a name given twice).
    public var field: String?

    public init(description: String, field: String? = nil) {
        self.description = description
        self.field = field
    }
}

extension JSONValue {
    /// The deepest nesting accepted in a request body. Ferry's documents nest four levels at most;
    /// the bound keeps a hostile body from exhausting the stack of whoever walks the tree.
    public static let maximumDepth = 32

    /// Parses a request body strictly (see `JSONParser`). Fails with a readable message.
    public static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        try JSONParser.parse(Array(bytes), maximumDepth: maximumDepth)
    }

    /// Serialises compactly with sorted keys, so equal values give equal bytes: what
    /// `JSONEncoder` writes with `.sortedKeys` and `.withoutEscapingSlashes`, written directly.
    public func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(into: &bytes)
        return bytes
    }

    private func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): bytes.append(contentsOf: Self.numberText(value).utf8)
        case .string(let value): Self.write(string: value, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            // Code point order, as JSONEncoder's sortedKeys.
            for (index, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.write(string: key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key]?.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Whole numbers without a fraction (as `encode(to:)` writes them), others in Swift's
    /// shortest form; JSON has no infinities, which are written as null.
    private static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if let whole = wholeNumber(value) { return String(whole) }
        let text = value.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// A number written without a fraction ("6", not "6.0"), as a client would write it.
    static func wholeNumber(_ value: Double) -> Int64? {
        value.rounded() == value && abs(value) < 9.0e15 ? Int64(value) : nil
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string, escaped as `serialized()` escapes them: for writers of whole documents.
    public static func write(string: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: "\\\\".utf8)
            case 0x08: bytes.append(contentsOf: "\\b".utf8)
            case 0x09: bytes.append(contentsOf: "\\t".utf8)
            case 0x0A: bytes.append(contentsOf: "\\n".utf8)
            case 0x0C: bytes.append(contentsOf: "\\f".utf8)
            case 0x0D: bytes.append(contentsOf: "\\r".utf8)
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// The JSON form of any Encodable value (dates as ISO 8601), for event payloads.
    /// The value as `JSONCoding`'s encoder writes it, as a tree (see `JSONValueEncoder`).
    public init(encoding value: some Encodable) throws {
        self = try JSONValueEncoder.encode(value)
    }
}
