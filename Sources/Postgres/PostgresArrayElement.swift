/// A type whose Swift arrays are PostgreSQL values: `[String]` is text[], `[Int64]` is int8[],
/// `[String?]` a text[] with NULLs — and `[UInt8]` is bytea, PostgreSQL's own array of bytes.
///
/// Swift allows only one conditional conformance of `Array` to `PostgresBindable`, so the element
/// type decides how its array is sent and read (`postgresValue(of:)`, `postgresArray(from:)`); the
/// default is a one-dimensional array literal of the element texts.
public protocol PostgresArrayElement: Sendable {
    /// The array type, e.g. `.textArray`.
    static var postgresArrayType: PostgresDataType { get }
    /// The element as written inside an array literal; nil is NULL.
    var postgresArrayElementText: String? { get }
    /// Reads one element of an array literal; nil is NULL.
    init(postgresArrayElementText: String?) throws
    static func postgresValue(of array: [Self]) -> PostgresValue
    static func postgresArray(from text: String) throws -> [Self]
}

extension PostgresArrayElement {
    public static func postgresValue(of array: [Self]) -> PostgresValue {
        .text(PostgresArrayLiteral.format(array.map(\.postgresArrayElementText)), type: postgresArrayType)
    }

    public static func postgresArray(from text: String) throws -> [Self] {
        try PostgresArrayLiteral.parse(text).map { try Self(postgresArrayElementText: $0) }
    }

    static func nonNullText(_ text: String?) throws -> String {
        guard let text else {
            throw PostgresError.decoding("array holds NULL but the element type \(Self.self) is not optional")
        }
        return text
    }
}

extension Array: PostgresBindable where Element: PostgresArrayElement {
    public static var postgresNullType: PostgresDataType { Element.postgresArrayType }
    public var postgresValue: PostgresValue { Element.postgresValue(of: self) }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public init(postgresText: String) throws {
        self = try Element.postgresArray(from: postgresText)
    }
}

extension String: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .textArray }
    public var postgresArrayElementText: String? { self }
    public init(postgresArrayElementText text: String?) throws {
        self = try Self.nonNullText(text)
    }
}

extension Int64: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
    public var postgresArrayElementText: String? { String(self) }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int64(postgresText: Self.nonNullText(text))
    }
}

extension Int: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
    public var postgresArrayElementText: String? { String(self) }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int(postgresText: Self.nonNullText(text))
    }
}

extension Int32: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int4Array }
    public var postgresArrayElementText: String? { String(self) }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int32(postgresText: Self.nonNullText(text))
    }
}

extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { Wrapped.postgresArrayType }
    public var postgresArrayElementText: String? { self?.postgresArrayElementText }
    public init(postgresArrayElementText text: String?) throws {
        self = try text.map { try Wrapped(postgresArrayElementText: $0) }
    }
}

/// `[[UInt8]]` is bytea[]: each element in the hex format, inside the array's text literal (twice
/// the bytes of the binary format a lone bytea is sent in: for many small values in one statement).
extension Array: PostgresArrayElement where Element == UInt8 {
    public static var postgresArrayType: PostgresDataType { .byteaArray }
    public var postgresArrayElementText: String? { PostgresByteaText.encode(self) }
    public init(postgresArrayElementText text: String?) throws {
        self = try PostgresByteaText.decode(Self.nonNullText(text))
    }
}

/// `[UInt8]` is bytea: sent in binary format, read from the hex text format.
extension UInt8: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .bytea }
    public var postgresArrayElementText: String? { String(self) }
    public init(postgresArrayElementText text: String?) throws {
        guard let value = UInt8(try Self.nonNullText(text)) else {
            throw PostgresError.decoding("array element is not a byte value")
        }
        self = value
    }

    public static func postgresValue(of array: [UInt8]) -> PostgresValue {
        .binary(array, type: .bytea)
    }

    public static func postgresArray(from text: String) throws -> [UInt8] {
        try PostgresByteaText.decode(text)
    }
}
