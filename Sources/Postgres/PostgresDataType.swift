/// A PostgreSQL type OID, sent with a parameter so the server knows how to read it.
///
/// `.unknown` (OID 0) lets the server infer the type from context, exactly as it does for a quoted
/// literal in SQL text; that is how strings are bound.
public struct PostgresDataType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let unknown = PostgresDataType(rawValue: 0)
    public static let bool = PostgresDataType(rawValue: 16)
    public static let bytea = PostgresDataType(rawValue: 17)
    public static let byteaArray = PostgresDataType(rawValue: 1001)
    public static let int8 = PostgresDataType(rawValue: 20)
    public static let int4 = PostgresDataType(rawValue: 23)
    public static let text = PostgresDataType(rawValue: 25)
    public static let float8 = PostgresDataType(rawValue: 701)
    public static let timestamptz = PostgresDataType(rawValue: 1184)
    public static let jsonb = PostgresDataType(rawValue: 3802)
    public static let int4Array = PostgresDataType(rawValue: 1007)
    public static let textArray = PostgresDataType(rawValue: 1009)
    public static let int8Array = PostgresDataType(rawValue: 1016)
}
