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
            // Whole numbers print without a fraction ("6", not "6.0"), as a client would write them.
            if value.rounded() == value, abs(value) < 9.0e15 {
                try container.encode(Int64(value))
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

    /// Serialises compactly with sorted keys, so equal values give equal bytes.
    public func serialized() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(self))) ?? Array("null".utf8)
    }
}

extension JSONValue {
    /// The JSON form of any Encodable value (dates as ISO 8601), for event payloads.
    public init(encoding value: some Encodable) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: JSONCoding.makeEncoder().encode(value))
    }
}
