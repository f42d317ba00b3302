/// The base62 alphabet (`0-9A-Za-z`) used by API keys, operator tokens and resource ids.
///
/// Base62 survives every place an identifier travels — URLs, headers, shell arguments,
/// double-click selection — without escaping, which base64's `+`, `/` and `=` do not.
enum Base62 {
    /// The 62 symbols, in value order.
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A string of `length` symbols, each drawn uniformly.
    ///
    /// Symbols come from the bytes of 64-bit draws, eight at a time: a byte below 248 (4 × 62)
    /// gives `byte % 62` with no modulo bias, and the rest (1 in 32) are skipped. The system
    /// generator makes a system call per draw, so this is a few calls per id, not one per symbol.
    static func randomString(length: Int, using generator: inout some RandomNumberGenerator) -> String {
        let unbiasedBound = UInt8(alphabet.count * 4)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        while bytes.count < length {
            var draw = generator.next()
            for _ in 0..<8 where bytes.count < length {
                let byte = UInt8(truncatingIfNeeded: draw)
                draw >>= 8
                if byte < unbiasedBound {
                    bytes.append(alphabet[Int(byte % UInt8(alphabet.count))])
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` written in base62, most significant symbol first, left-padded with `0` to `width`.
    /// `width` must be large enough for the value (6 symbols hold any `UInt32`: 62⁶ > 2³²).
    static func encode(_ value: UInt32, width: Int) -> String {
        var digits = [UInt8](repeating: alphabet[0], count: width)
        var remaining = UInt64(value)
        var index = width - 1
        while remaining > 0, index >= 0 {
            digits[index] = alphabet[Int(remaining % 62)]
            remaining /= 62
            index -= 1
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// Whether `byte` is one of the 62 symbols.
    static func contains(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "a")...UInt8(ascii: "z"):
            return true
        default:
            return false
        }
    }
}
