/// A type whose Swift arrays are PostgreSQL values: `[String]` is text[], `[Int64]` is int8[],
/// `[String?]` a text[] with NULLs — and `[UInt8]` is bytea, PostgreSQL's own array of bytes.
///
/// Swift allows only one conditional conformance of `Array` to `PostgresBindable`, so the element
/// type decides how its array is sent and read (`postgresValue(of:)`, `postgresArray(from:)`).
/// Arrays of text, integers and byte strings are sent in the binary format (`PostgresBinaryArray`);
/// the default is a one-dimensional array literal of the element texts. Arrays are read from
/// their text format.
public protocol PostgresArrayElement: Sendable {
    /// The array type, e.g. `.textArray`.
    static var postgresArrayType: PostgresDataType { get }
    /// The element as written inside an array literal; nil is NULL.
    var postgresArrayElementText: String? { get }
    /// Reads one element of an array literal; nil is NULL.
    init(postgresArrayElementText: String?) throws
    static func postgresValue(of array: [Self]) -> PostgresValue
    /// The array with NULLs (what `[Self?]` sends).
    static func postgresValue(ofOptionals array: [Self?]) -> PostgresValue
    static func postgresArray(from text: String) throws -> [Self]
}

extension PostgresArrayElement {
    public static func postgresValue(of array: [Self]) -> PostgresValue {
        postgresValue(ofOptionals: array.map { $0 })
    }

    public static func postgresValue(ofOptionals array: [Self?]) -> PostgresValue {
        .text(PostgresArrayLiteral.format(array.map { $0?.postgresArrayElementText }), type: postgresArrayType)
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
    public static func postgresValue(ofOptionals array: [String?]) -> PostgresValue {
        PostgresValue(.array(.text(array)), type: .textArray)
    }
    public init(postgresArrayElementText text: String?) throws {
        self = try Self.nonNullText(text)
    }
}

extension Int64: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
    public var postgresArrayElementText: String? { String(self) }
    public static func postgresValue(ofOptionals array: [Int64?]) -> PostgresValue {
        PostgresValue(.array(.int8(array)), type: .int8Array)
    }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int64(postgresText: Self.nonNullText(text))
    }
}

extension Int: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int8Array }
    public var postgresArrayElementText: String? { String(self) }
    public static func postgresValue(ofOptionals array: [Int?]) -> PostgresValue {
        PostgresValue(.array(.int8(array.map { $0.map(Int64.init) })), type: .int8Array)
    }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int(postgresText: Self.nonNullText(text))
    }
}

extension Int32: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { .int4Array }
    public var postgresArrayElementText: String? { String(self) }
    public static func postgresValue(ofOptionals array: [Int32?]) -> PostgresValue {
        PostgresValue(.array(.int4(array)), type: .int4Array)
    }
    public init(postgresArrayElementText text: String?) throws {
        self = try Int32(postgresText: Self.nonNullText(text))
    }
}

extension Optional: PostgresArrayElement where Wrapped: PostgresArrayElement {
    public static var postgresArrayType: PostgresDataType { Wrapped.postgresArrayType }
    public var postgresArrayElementText: String? { self?.postgresArrayElementText }
    public static func postgresValue(of array: [Wrapped?]) -> PostgresValue {
        Wrapped.postgresValue(ofOptionals: array)
    }
    public init(postgresArrayElementText text: String?) throws {
        self = try text.map { try Wrapped(postgresArrayElementText: $0) }
    }
}

/// `[[UInt8]]` is bytea[], sent in the binary format (read from the hex text format).
extension Array: PostgresArrayElement where Element == UInt8 {
    public static var postgresArrayType: PostgresDataType { .byteaArray }
    public var postgresArrayElementText: String? { PostgresByteaText.encode(self) }
    public static func postgresValue(ofOptionals array: [[UInt8]?]) -> PostgresValue {
        PostgresValue(.array(.bytea(array)), type: .byteaArray)
    }
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
