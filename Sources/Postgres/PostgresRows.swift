import CLibPQ

/// The rows of one statement, copied out of libpq's PGresult before it is freed, so they are plain
/// values that can cross threads.
///
/// All cells of a result share one byte buffer (text output, each cell located by offset), so a
/// result costs a handful of allocations however many rows and columns it has.
public struct PostgresRows: RandomAccessCollection, Sendable {
    let storage: Storage
    /// Rows inserted, updated, deleted, selected… as the command tag reports; 0 when it reports none.
    public var affectedRows: Int

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rowCount }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(storage: storage, row: position)
    }

    public var columnNames: [String] { storage.columnNames }

    /// The first row of a statement that always answers one (an aggregate; `RETURNING` or a
    /// look-up of a row known to exist). A broken promise throws, a failed request, where the
    /// subscript traps and takes the whole process down for every tenant (a jar deleted by a
    /// session's reset between two statements did).
    public func firstRow() throws -> PostgresRow {
        guard let row = first else { throw PostgresError.decoding("the statement answered no row where one was expected") }
        return row
    }

    final class Storage: Sendable {
        let columnNames: [String]
        let rowCount: Int
        let bytes: [UInt8]
        /// Per cell (row-major): where its text starts in `bytes` and its length, -1 for NULL.
        let cells: [(start: Int, length: Int)]

        init(columnNames: [String], rowCount: Int, bytes: [UInt8], cells: [(start: Int, length: Int)]) {
            self.columnNames = columnNames
            self.rowCount = rowCount
            self.bytes = bytes
            self.cells = cells
        }

        static let empty = Storage(columnNames: [], rowCount: 0, bytes: [], cells: [])
    }
}

extension PostgresRows {
    /// Copies a successful result. Does not free it.
    init(copying result: OpaquePointer) {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        affectedRows = Self.affectedRows(result)
        guard columnCount > 0 else {
            storage = .empty
            return
        }
        let columnNames = (0..<columnCount).map { column in
            PQfname(result, Int32(column)).map { String(cString: $0) } ?? ""
        }
        var cells: [(start: Int, length: Int)] = []
        cells.reserveCapacity(rowCount * columnCount)
        var total = 0
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(columnCount) {
                if PQgetisnull(result, row, column) != 0 {
                    cells.append((total, -1))
                } else {
                    let length = Int(PQgetlength(result, row, column))
                    cells.append((total, length))
                    total += length
                }
            }
        }
        let bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var index = 0
            for row in 0..<Int32(rowCount) {
                for column in 0..<Int32(columnCount) {
                    let cell = cells[index]
                    index += 1
                    guard cell.length > 0, let value = PQgetvalue(result, row, column), let base = buffer.baseAddress else { continue }
                    UnsafeMutableRawPointer(base + cell.start).copyMemory(from: value, byteCount: cell.length)
                }
            }
            initialized = total
        }
        storage = Storage(columnNames: columnNames, rowCount: rowCount, bytes: bytes, cells: cells)
    }

    /// PQcmdTuples: "" for commands that report no count.
    static func affectedRows(_ result: OpaquePointer) -> Int {
        guard let text = PQcmdTuples(result) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }
}

/// One row of a `PostgresRows`.
public struct PostgresRow: Sendable {
    let storage: PostgresRows.Storage
    let row: Int

    public var columnNames: [String] { storage.columnNames }
    public var columnCount: Int { storage.columnNames.count }

    /// The value of the named column (the first one, if several share the name).
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let index = storage.columnNames.firstIndex(of: column) else {
            throw PostgresError.decoding("no column named \"\(column)\"; the result has \(storage.columnNames)")
        }
        return try decode(index, as: type)
    }

    public func decode<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard storage.columnNames.indices.contains(index) else {
            throw PostgresError.decoding("no column at index \(index); the result has \(columnCount) columns")
        }
        let name = storage.columnNames[index]
        guard let text = text(at: index) else {
            if let optional = T.self as? any PostgresNullDecodable.Type, let null = optional.postgresNull as? T {
                return null
            }
            throw PostgresError.decoding("column \"\(name)\" is NULL but \(T.self) is not optional")
        }
        do {
            return try T(postgresText: text)
        } catch var error as PostgresError {
            error.kind = .decoding
            error.message = "column \"\(name)\" as \(T.self): \(error.message)"
            throw error
        } catch {
            throw PostgresError.decoding("column \"\(name)\" as \(T.self) failed", detail: String(describing: error))
        }
    }

    public func isNull(_ index: Int) -> Bool {
        storage.cells[row * columnCount + index].length < 0
    }

    /// The cell's text, nil for SQL NULL.
    func text(at index: Int) -> String? {
        let cell = storage.cells[row * columnCount + index]
        guard cell.length >= 0 else { return nil }
        return storage.bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[cell.start..<cell.start + cell.length]), as: UTF8.self)
        }
    }
}
