/// One bound parameter: SQL NULL, a text-format value, or a binary-format value, with its type.
///
/// Scalars are kept unboxed (no heap allocation per parameter) and written straight into the
/// parameter buffer when the statement is sent.
public struct PostgresValue: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case null
        /// Text format; must not contain NUL (checked when sent).
        case text(String)
        /// Binary format, raw bytes.
        case bytes([UInt8])
        /// Binary format, big-endian 8-byte integer (int8, and timestamptz as microseconds since 2000).
        case integer64(Int64)
        /// Binary format, big-endian 4-byte integer.
        case integer32(Int32)
        /// Binary format, IEEE 754 bits, big-endian.
        case float64(Double)
        /// Binary format, one byte.
        case boolean(Bool)
        /// Binary format, a one-dimensional array.
        case array(PostgresBinaryArray)
    }

    let storage: Storage
    public let type: PostgresDataType

    init(_ storage: Storage, type: PostgresDataType) {
        self.storage = storage
        self.type = type
    }

    /// SQL NULL; its type is inferred by the server from context.
    public static let null = PostgresValue(.null, type: .unknown)

    /// A value in PostgreSQL's text format, read by the type's input function (like a literal).
    public static func text(_ value: String, type: PostgresDataType = .unknown) -> PostgresValue {
        PostgresValue(.text(value), type: type)
    }

    /// A value in PostgreSQL's binary format for `type` (read by the type's receive function).
    public static func binary(_ bytes: [UInt8], type: PostgresDataType) -> PostgresValue {
        PostgresValue(.bytes(bytes), type: type)
    }

    public var isNull: Bool {
        if case .null = storage { return true }
        return false
    }
}

/// A Swift value that can be sent as a bound parameter (`$1`, `$2`, …).
public protocol PostgresBindable: Sendable {
    var postgresValue: PostgresValue { get }
    /// The type a nil of this type is sent with, so that a statement is prepared once whichever
    /// of its optional parameters are NULL (`.unknown` lets the server infer it).
    static var postgresNullType: PostgresDataType { get }
}

extension PostgresBindable {
    public static var postgresNullType: PostgresDataType { .unknown }
}

extension PostgresValue: PostgresBindable {
    public var postgresValue: PostgresValue { self }
}
