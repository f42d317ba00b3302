import Postgres

extension Page {
    /// A page of `table`'s rows in creation order (`created_at`, then `id`: the order of the
    /// tables' tenant indexes; the tenants themselves have none, nor need one) after the row
    /// `after`, the tenant's (nil: every row, for the tenants themselves); a cursor that names no
    /// row of the list is refused (`PageCursor`).
    /// `columns` may qualify their names with `alias`.
    static func inCreationOrder(
        of table: String, as alias: String = "t", columns: String, tenantID: String?, limit: Int, after: String?,
        resource: String, on connection: PostgresConnection, decode: (PostgresRow) throws -> Element, cursor: (Element) -> String
    ) throws -> Page {
        var list = ListConditions()
        let tenant = tenantID.map { list.bind($0) }
        let ofTheTenant = tenant.map { " AND tenant_id = \($0)" } ?? ""
        if let tenant { list.require("\(alias).tenant_id = \(tenant)") }
        list.filter(after) { "(\(alias).created_at, \(alias).id) > (SELECT created_at, id FROM \(table) WHERE id = \($0)\(ofTheTenant))" }
        let rows = try connection.query(
            "SELECT \(columns) FROM \(table) \(alias) \(list.whereClause) ORDER BY \(alias).created_at, \(alias).id LIMIT \(list.bind(limit + 1))",
            list.parameters
        )
        try PageCursor.check(after, pageIsEmpty: rows.isEmpty, resource: resource) { cursorID in
            // The tenants themselves have no tenant_id.
            var row = ListConditions()
            row.require("id = \(row.bind(cursorID))")
            row.filter(tenantID) { "tenant_id = \($0)" }
            return try !connection.query("SELECT 1 FROM \(table) \(row.whereClause)", row.parameters).isEmpty
        }
        return try Page(rows: rows, limit: limit, decode: decode, cursor: cursor)
    }
}
