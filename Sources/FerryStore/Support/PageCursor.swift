/// `?after=`: the last item of the previous page. A cursor that names nothing (mistyped,
/// another tenant's, or an item deleted since) found no rows and read as the end of the list,
/// so a client stopped paging early without knowing; it is refused instead.
enum PageCursor {
    /// Throws when `after` names no item of the list. Asked only of an empty page: a page with
    /// items proves its cursor.
    static func check(_ after: String?, pageIsEmpty: Bool, resource: String, exists: (String) throws -> Bool) throws {
        guard let after, pageIsEmpty, try !exists(after) else { return }
        throw StoreError.invalidReference(
            field: "query.after", message: "names no \(resource) of this list (mistyped, or deleted since); list again without it."
        )
    }
}
