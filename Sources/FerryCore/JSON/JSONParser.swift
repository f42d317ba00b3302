/// A strict RFC 8259 parser for request bodies. Stricter than Foundation's decoder on purpose:
/// trailing commas, comments, a byte-order mark and repeated member names are refused, so no
/// two readers of one body (Ferry, a proxy, a tenant's log) can see different requests.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// The dotted path of the value being read, for naming a member given twice.
    private var path: [String] = []

    static func parse(_ bytes: [UInt8], maximumDepth: Int) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(maximumDepth: maximumDepth)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private func failure(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(description: "The body is not valid JSON: \(message) at byte \(index).")
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(JSONSyntaxError) {
        for byte in literal.utf8 {
            guard current == byte else { throw failure("expected \(literal)") }
            index += 1
        }
    }

    private mutating func value(maximumDepth: Int) throws(JSONSyntaxError) -> JSONValue {
        switch current {
        case UInt8(ascii: "{"): return try object(maximumDepth: maximumDepth)
        case UInt8(ascii: "["): return try array(maximumDepth: maximumDepth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case let byte? where byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte):
            return .number(try number())
        case nil:
            throw failure("unexpected end")
        default:
            throw failure("unexpected character")
        }
    }

    private mutating func enter(maximumDepth: Int) throws(JSONSyntaxError) {
        depth += 1
        guard depth <= maximumDepth else {
            throw JSONSyntaxError(description: "The body nests JSON deeper than \(maximumDepth) levels.")
        }
        index += 1
        skipWhitespace()
    }

    private mutating func object(maximumDepth: Int) throws(JSONSyntaxError) -> JSONValue {
        try enter(maximumDepth: maximumDepth)
        var members: [String: JSONValue] = [:]
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let name = try string()
            guard members[name] == nil else {
                let field = (path + [name]).joined(separator: ".")
                throw JSONSyntaxError(description: "\(field): is given twice; a member may appear only once.", field: field)
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            path.append(name)
            members[name] = try value(maximumDepth: maximumDepth)
            path.removeLast()
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                continue
            }
            guard current == UInt8(ascii: "}") else { throw failure("expected ',' or '}'") }
            index += 1
            depth -= 1
            return .object(members)
        }
    }

    private mutating func array(maximumDepth: Int) throws(JSONSyntaxError) -> JSONValue {
        try enter(maximumDepth: maximumDepth)
        var elements: [JSONValue] = []
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            path.append("[\(elements.count)]")
            elements.append(try value(maximumDepth: maximumDepth))
            path.removeLast()
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                continue
            }
            guard current == UInt8(ascii: "]") else { throw failure("expected ',' or ']'") }
            index += 1
            depth -= 1
            return .array(elements)
        }
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1  // the opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                utf8.append(contentsOf: String(Character(try escape())).utf8)
            case 0x00...0x1F:
                throw failure("control character in a string")
            default:
                utf8.append(byte)
                index += 1
            }
        }
    }

    private mutating func escape() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard let byte = current else { throw failure("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try hex4()
            if (0xD800...0xDBFF).contains(first) {
                // A high surrogate must be followed by a low one.
                guard current == UInt8(ascii: "\\") else { throw failure("a lone surrogate") }
                index += 1
                guard current == UInt8(ascii: "u") else { throw failure("a lone surrogate") }
                index += 1
                let second = try hex4()
                guard (0xDC00...0xDFFF).contains(second),
                      let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
                else { throw failure("a lone surrogate") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw failure("a lone surrogate") }
            return scalar
        default:
            throw failure("unknown escape")
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current else { throw failure("unterminated escape") }
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("bad \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        func digits(_ parser: inout JSONParser) -> Int {
            var count = 0
            while let byte = parser.current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                parser.index += 1
                count += 1
            }
            return count
        }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits(&self) > 0 else { throw failure("bad number") }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("bad number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("bad number") }
        }
        guard let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { throw failure("bad number") }
        return number
    }
}
