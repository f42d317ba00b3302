import Foundation

/// A JSON document, bound as jsonb and read from json or jsonb columns.
///
/// It carries the JSON text as is: encoding and decoding models is the caller's business, with
/// `init(encoding:)` and `decode(_:)` as shortcuts.
public struct PostgresJSON: Sendable, Hashable, PostgresBindable, PostgresDecodable {
    public var text: String

    public init(text: String) {
        self.text = text
    }

    /// `data` must be UTF-8 JSON (what JSONEncoder produces).
    public init(data: Data) {
        self.text = String(decoding: data, as: UTF8.self)
    }

    public init<Value: Encodable>(encoding value: Value, encoder: JSONEncoder = JSONEncoder()) throws {
        self.init(data: try encoder.encode(value))
    }

    public var data: Data { Data(text.utf8) }

    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, decoder: JSONDecoder = JSONDecoder()) throws -> Value {
        try decoder.decode(type, from: data)
    }

    public static var postgresNullType: PostgresDataType { .jsonb }
    public var postgresValue: PostgresValue { .text(text, type: .jsonb) }

    public init(postgresText: String) {
        self.text = postgresText
    }
}
