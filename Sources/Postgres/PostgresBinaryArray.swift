import CLibPQ

/// A one-dimensional array sent in PostgreSQL's binary format (what `array_recv` reads): a
/// header, then each element's length and bytes, written straight into the parameter buffer.
///
/// Ferry sends its batches as arrays (`unnest($1::text[], …)`). In the text format every element
/// was quoted and escaped here and parsed back by `array_in`, 8 % of PostgreSQL's CPU in the
/// webhooks drain; in this format neither side looks inside an element.
enum PostgresBinaryArray: Sendable, Hashable {
    case text([String?])
    case int8([Int64?])
    case int4([Int32?])
    case bytea([[UInt8]?])

    /// The element type's OID, which `array_recv` checks against the parameter's array type.
    private var elementType: Oid {
        switch self {
        case .text: 25
        case .int8: 20
        case .int4: 23
        case .bytea: 17
        }
    }

    private var count: Int {
        switch self {
        case .text(let elements): elements.count
        case .int8(let elements): elements.count
        case .int4(let elements): elements.count
        case .bytea(let elements): elements.count
        }
    }

    /// Appends the array; `number` names the parameter in errors.
    func write(to buffer: inout [UInt8], number: Int) throws {
        guard count <= Int32.max else { throw PostgresError(kind: .query, message: "parameter $\(number) has too many elements") }
        let start = buffer.count
        // Dimensions (none for an empty array), the has-NULLs flag (array_recv recomputes it;
        // 0 is always accepted), the element type, then the one dimension's length and lower bound.
        Self.append(Int32(count == 0 ? 0 : 1), to: &buffer)
        Self.append(Int32(0), to: &buffer)
        Self.append(UInt32(elementType), to: &buffer)
        if count > 0 {
            Self.append(Int32(count), to: &buffer)
            Self.append(Int32(1), to: &buffer)
        }
        switch self {
        case .text(let elements):
            for element in elements {
                guard var element else { Self.append(Int32(-1), to: &buffer); continue }
                try element.withUTF8 { bytes in
                    if bytes.contains(0) {
                        throw PostgresError(kind: .query, message: "parameter $\(number) contains a NUL character, which PostgreSQL text cannot hold")
                    }
                    try Self.appendElement(bytes, to: &buffer, number: number)
                }
            }
        case .int8(let elements):
            for element in elements {
                guard let element else { Self.append(Int32(-1), to: &buffer); continue }
                Self.append(Int32(8), to: &buffer)
                Self.append(element, to: &buffer)
            }
        case .int4(let elements):
            for element in elements {
                guard let element else { Self.append(Int32(-1), to: &buffer); continue }
                Self.append(Int32(4), to: &buffer)
                Self.append(element, to: &buffer)
            }
        case .bytea(let elements):
            for element in elements {
                guard let element else { Self.append(Int32(-1), to: &buffer); continue }
                try element.withUnsafeBufferPointer { try Self.appendElement($0, to: &buffer, number: number) }
            }
        }
        guard buffer.count - start <= Int32.max else {
            throw PostgresError(kind: .query, message: "parameter $\(number) is larger than PostgreSQL's 1 GB limit")
        }
    }

    private static func appendElement(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8], number: Int) throws {
        guard bytes.count <= Int32.max else {
            throw PostgresError(kind: .query, message: "parameter $\(number) has an element larger than PostgreSQL's 1 GB limit")
        }
        append(Int32(bytes.count), to: &buffer)
        buffer.append(contentsOf: bytes)
    }

    private static func append<I: FixedWidthInteger>(_ integer: I, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: integer.bigEndian) { buffer.append(contentsOf: $0) }
    }
}
