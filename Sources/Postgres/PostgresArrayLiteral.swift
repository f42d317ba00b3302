/// One-dimensional PostgreSQL array literals: `{a,"b c",NULL,"NULL","say \"hi\""}`.
///
/// Sending (only element types without a binary form, `PostgresBinaryArray`; none of Ferry's
/// today): every element is double-quoted with `\` and `"` escaped, so no element can be read
/// as NULL, a delimiter or a nested array. Receiving (every array a query returns): the server's
/// output, where elements are quoted only when needed and an unquoted `NULL` is SQL NULL.
enum PostgresArrayLiteral {
    static func format(_ elements: [String?]) -> String {
        // Built as UTF-8 bytes: `\` and `"` are ASCII, so escaping at the byte level is exact
        // (per-character appends to a String were a visible share of the engine's CPU when event
        // batches were sent this way).
        var literal: [UInt8] = []
        literal.reserveCapacity(2 + elements.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        literal.append(UInt8(ascii: "{"))
        for (index, element) in elements.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard var text = element else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(UInt8(ascii: "\""))
            text.withUTF8 { Self.appendEscaped($0, to: &literal) }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    /// The bytes with `\` and `"` escaped, copied a run at a time between them.
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to literal: inout [UInt8]) {
        var runStart = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\\") || bytes[index] == UInt8(ascii: "\"") {
            literal.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            literal.append(UInt8(ascii: "\\"))
            runStart = index
        }
        literal.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }

    static func parse(_ text: String) throws -> [String?] {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else {
            throw PostgresError.decoding("not a one-dimensional array literal (bounds decoration or not an array)")
        }
        var elements: [String?] = []
        var position = 1
        let end = bytes.count - 1
        if position == end { return [] }
        while true {
            guard position < end else { throw malformed }
            if bytes[position] == UInt8(ascii: "{") {
                throw PostgresError.decoding("multidimensional arrays are not supported")
            }
            if bytes[position] == UInt8(ascii: "\"") {
                var element: [UInt8] = []
                position += 1
                while true {
                    guard position < end else { throw malformed }
                    var byte = bytes[position]
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\") {
                        position += 1
                        guard position < end else { throw malformed }
                        byte = bytes[position]
                    }
                    element.append(byte)
                    position += 1
                }
                position += 1
                elements.append(String(decoding: element, as: UTF8.self))
            } else {
                let start = position
                while position < end, bytes[position] != UInt8(ascii: ",") { position += 1 }
                let element = String(decoding: bytes[start..<position], as: UTF8.self)
                elements.append(element.uppercased() == "NULL" ? nil : element)
            }
            if position == end { return elements }
            guard bytes[position] == UInt8(ascii: ",") else { throw malformed }
            position += 1
        }
    }

    private static var malformed: PostgresError {
        .decoding("malformed array literal")
    }
}
