import Postgres

/// One page of a list: `{data, nextCursor}`. Queries fetch `limit + 1` rows; the extra row only
/// tells whether another page exists.
public struct Page<Element: Sendable>: Sendable {
    public var items: [Element]
    public var nextCursor: String?

    public init(items: [Element], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    init(rows: PostgresRows, limit: Int, decode: (PostgresRow) throws -> Element, cursor: (Element) -> String) throws {
        var items = try rows.prefix(limit).map(decode)
        if items.count > limit { items.removeLast() }
        self.items = items
        self.nextCursor = rows.count > limit ? items.last.map(cursor) : nil
    }
}
