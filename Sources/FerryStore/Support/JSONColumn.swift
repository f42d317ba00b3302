import FerryCore
import Foundation
import Postgres

/// Codable values in jsonb columns.
enum JSONColumn {
    private static let encoder = JSONCoding.makeEncoder()
    private static let decoder = JSONCoding.makeDecoder()

    static func encode(_ value: some Encodable) throws -> PostgresJSON {
        PostgresJSON(data: try encoder.encode(value))
    }

    static func encodeOptional(_ value: (some Encodable)?) throws -> PostgresJSON? {
        guard let value else { return nil }
        return try encode(value)
    }

    static func decode<T: Decodable>(_ type: T.Type, from json: PostgresJSON) throws -> T {
        try decoder.decode(T.self, from: json.data)
    }
}

extension PostgresRow {
    /// Decodes a jsonb column into a Codable value.
    func decodeJSON<T: Decodable>(_ column: String, as type: T.Type) throws -> T {
        try JSONColumn.decode(T.self, from: decode(column, as: PostgresJSON.self))
    }

    func decodeJSONIfPresent<T: Decodable>(_ column: String, as type: T.Type) throws -> T? {
        guard let json = try decode(column, as: PostgresJSON?.self) else { return nil }
        return try JSONColumn.decode(T.self, from: json)
    }
}
