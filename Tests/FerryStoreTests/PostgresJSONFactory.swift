import FerryCore
import Foundation
import Postgres

/// jsonb values for arranging rows with plain SQL, encoded as the store encodes them.
enum PostgresJSONFactory {
    typealias Column = PostgresJSON

    static func json(_ value: some Encodable) throws -> PostgresJSON {
        PostgresJSON(data: try JSONCoding.makeEncoder().encode(value))
    }

    static func decode<T: Decodable>(_ type: T.Type, from json: PostgresJSON) throws -> T {
        try json.decode(T.self, decoder: JSONCoding.makeDecoder())
    }
}
