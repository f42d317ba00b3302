/// bytea in PostgreSQL's text output: the hex format `\x0a1b…` (the connection sets
/// `bytea_output=hex`, so the older escape format never arrives).
enum PostgresByteaText {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The bytes as bytea's hex input, `\x0a1b…` (what an element of a bytea[] literal holds).
    static func encode(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: 2 + bytes.count * 2) { buffer in
            buffer[0] = UInt8(ascii: "\\")
            buffer[1] = UInt8(ascii: "x")
            for (index, byte) in bytes.enumerated() {
                buffer[2 + 2 * index] = hexDigits[Int(byte >> 4)]
                buffer[3 + 2 * index] = hexDigits[Int(byte & 0x0f)]
            }
            return 2 + bytes.count * 2
        }
    }

    static func decode(_ text: String) throws -> [UInt8] {
        var text = text
        return try text.withUTF8 { utf8 in
            guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"),
                  utf8.count % 2 == 0
            else { throw PostgresError.decoding("bytea is not in hex format") }
            let count = (utf8.count - 2) / 2
            return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                var source = 2
                for index in 0..<count {
                    guard let high = nibble(utf8[source]), let low = nibble(utf8[source + 1]) else {
                        throw PostgresError.decoding("bytea contains a non-hex digit")
                    }
                    buffer[index] = high << 4 | low
                    source += 2
                    initialized = index + 1
                }
            }
        }
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }
}
