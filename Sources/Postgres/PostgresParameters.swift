import CLibPQ

/// The four parallel arrays PQexecParams wants, built from the bound values.
///
/// All parameter bytes go into one buffer (text values NUL-terminated, binary values big-endian),
/// so a statement costs one buffer allocation however many parameters it has; the pointer, type,
/// length and format arrays live in temporary (stack) storage for the duration of the call.
enum PostgresParameters {
    static func withEncoded<R>(
        _ parameters: [any PostgresBindable],
        _ body: (
            _ count: Int32,
            _ types: UnsafePointer<Oid>?,
            _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?,
            _ formats: UnsafePointer<Int32>?
        ) throws -> R
    ) throws -> R {
        let count = parameters.count
        var buffer: [UInt8] = []
        return try withUnsafeTemporaryAllocation(of: Oid.self, capacity: count) { types in
            try withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { offsets in
                try withUnsafeTemporaryAllocation(of: Int32.self, capacity: count) { lengths in
                    try withUnsafeTemporaryAllocation(of: Int32.self, capacity: count) { formats in
                        for (index, parameter) in parameters.enumerated() {
                            let value = parameter.postgresValue
                            types[index] = value.type.rawValue
                            offsets[index] = buffer.count
                            let (length, format) = try append(value, number: index + 1, to: &buffer)
                            lengths[index] = length
                            formats[index] = format
                        }
                        return try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
                            try buffer.withUnsafeBytes { bytes in
                                for index in 0..<count {
                                    values[index] = lengths[index] < 0
                                        ? nil
                                        : bytes.baseAddress.map { ($0 + offsets[index]).assumingMemoryBound(to: CChar.self) }
                                }
                                return try body(
                                    Int32(count), UnsafePointer(types.baseAddress),
                                    UnsafePointer(values.baseAddress), UnsafePointer(lengths.baseAddress),
                                    UnsafePointer(formats.baseAddress)
                                )
                            }
                        }
                    }
                }
            }
        }
    }

    /// Writes one value; returns its length (-1 for NULL) and format (0 text, 1 binary).
    private static func append(_ value: PostgresValue, number: Int, to buffer: inout [UInt8]) throws -> (Int32, Int32) {
        switch value.storage {
        case .null:
            return (-1, 0)
        case .text(let text):
            let start = buffer.count
            buffer.append(contentsOf: text.utf8)
            if buffer[start...].contains(0) {
                throw PostgresError(kind: .query, message: "parameter $\(number) contains a NUL character, which PostgreSQL text cannot hold")
            }
            buffer.append(0)
            return (Int32(buffer.count - start - 1), 0)
        case .bytes(let bytes):
            guard bytes.count <= Int32.max else {
                throw PostgresError(kind: .query, message: "parameter $\(number) is larger than PostgreSQL's 1 GB limit")
            }
            buffer.append(contentsOf: bytes)
            // A zero-length value still needs a valid pointer, which a following byte provides.
            if bytes.isEmpty { buffer.append(0) }
            return (Int32(bytes.count), 1)
        case .integer64(let integer):
            appendBigEndian(integer, to: &buffer)
            return (8, 1)
        case .integer32(let integer):
            appendBigEndian(integer, to: &buffer)
            return (4, 1)
        case .float64(let double):
            appendBigEndian(double.bitPattern, to: &buffer)
            return (8, 1)
        case .boolean(let bool):
            buffer.append(bool ? 1 : 0)
            return (1, 1)
        case .array(let array):
            let start = buffer.count
            try array.write(to: &buffer, number: number)
            return (Int32(buffer.count - start), 1)
        }
    }

    private static func appendBigEndian<I: FixedWidthInteger>(_ integer: I, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: integer.bigEndian) { buffer.append(contentsOf: $0) }
    }
}
