import Foundation

/// A Swift type that can be read from a column in PostgreSQL's text output format.
///
/// Throw `PostgresError` (kind `.decoding`) for text that does not fit; `PostgresRow.decode` adds
/// the column name. SQL NULL never reaches `init(postgresText:)`: it decodes only into `Optional`.
public protocol PostgresDecodable {
    init(postgresText: String) throws
}

extension PostgresDecodable {
    static func unreadable(_ text: String) -> PostgresError {
        .decoding("value is not a valid \(Self.self)", detail: text)
    }
}

extension String: PostgresDecodable {
    public init(postgresText: String) { self = postgresText }
}

extension Int: PostgresDecodable {
    public init(postgresText: String) throws {
        guard let value = Int(postgresText) else { throw Self.unreadable(postgresText) }
        self = value
    }
}

extension Int64: PostgresDecodable {
    public init(postgresText: String) throws {
        guard let value = Int64(postgresText) else { throw Self.unreadable(postgresText) }
        self = value
    }
}

extension Int32: PostgresDecodable {
    public init(postgresText: String) throws {
        guard let value = Int32(postgresText) else { throw Self.unreadable(postgresText) }
        self = value
    }
}

/// Also reads PostgreSQL's `NaN`, `Infinity` and `-Infinity`.
extension Double: PostgresDecodable {
    public init(postgresText: String) throws {
        guard let value = Double(postgresText) else { throw Self.unreadable(postgresText) }
        self = value
    }
}

/// PostgreSQL prints booleans as `t` and `f`.
extension Bool: PostgresDecodable {
    public init(postgresText: String) throws {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw Self.unreadable(postgresText)
        }
    }
}

/// timestamptz (and timestamp, read as UTC, and date, read as midnight UTC).
extension Date: PostgresDecodable {
    public init(postgresText: String) throws {
        self = try PostgresTimestamp.parse(postgresText)
    }
}

/// bytea.
extension Data: PostgresDecodable {
    public init(postgresText: String) throws {
        self = Data(try PostgresByteaText.decode(postgresText))
    }
}

/// SQL NULL becomes nil; `PostgresRow.decode` checks for this conformance before reporting a NULL.
extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(postgresText: String) throws {
        self = .some(try Wrapped(postgresText: postgresText))
    }
}

/// What lets `PostgresRow.decode` tell an optional type (which accepts SQL NULL) from one that does not.
protocol PostgresNullDecodable {
    static var postgresNull: Self { get }
}

extension Optional: PostgresNullDecodable {
    static var postgresNull: Self { .none }
}
