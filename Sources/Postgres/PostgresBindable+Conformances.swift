import Foundation

/// Strings are bound like a quoted literal in SQL text (type `unknown`): the server reads them as
/// whatever the context needs — text, an enum, a uuid, a timestamp. Where the context says
/// nothing (`jsonb_build_object('k', $1)`), write `$1::text`.
extension String: PostgresBindable {
    public var postgresValue: PostgresValue { .text(self) }
}

extension Int: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .int8 }
    public var postgresValue: PostgresValue { PostgresValue(.integer64(Int64(self)), type: .int8) }
}

extension Int64: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .int8 }
    public var postgresValue: PostgresValue { PostgresValue(.integer64(self), type: .int8) }
}

extension Int32: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .int4 }
    public var postgresValue: PostgresValue { PostgresValue(.integer32(self), type: .int4) }
}

extension Double: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .float8 }
    public var postgresValue: PostgresValue { PostgresValue(.float64(self), type: .float8) }
}

extension Bool: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .bool }
    public var postgresValue: PostgresValue { PostgresValue(.boolean(self), type: .bool) }
}

/// timestamptz, rounded to PostgreSQL's microsecond precision.
extension Date: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .timestamptz }
    public var postgresValue: PostgresValue {
        PostgresValue(.integer64(PostgresTimestamp.microsecondsSincePostgresEpoch(self)), type: .timestamptz)
    }
}

/// bytea, sent in binary format (no escaping, zero bytes welcome).
extension Data: PostgresBindable {
    public static var postgresNullType: PostgresDataType { .bytea }
    public var postgresValue: PostgresValue { .binary([UInt8](self), type: .bytea) }
}

/// nil is SQL NULL.
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public static var postgresNullType: PostgresDataType { Wrapped.postgresNullType }

    public var postgresValue: PostgresValue {
        switch self {
        case .none: return PostgresValue(.null, type: Wrapped.postgresNullType)
        case .some(let wrapped): return wrapped.postgresValue
        }
    }
}
