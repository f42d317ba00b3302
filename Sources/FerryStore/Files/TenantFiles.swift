import Foundation

/// Where a tenant's files live under the data directory:
///
///     <data>/tenants/<tenant id>/partial/<name>     downloads in progress (and kept for resume data)
///     <data>/tenants/<tenant id>/downloads/<name>   finished downloads
///     <data>/tenants/<tenant id>/blobs/<name>       uploaded blobs
///     <data>/tenants/<tenant id>/cache/<name>       bodies of cached responses
///     <data>/tenants/<tenant id>/streams/<name>     streamed upload bodies (<task>.<generation>.body, .done)
///
/// Every name is one Ferry made (a resource id, maybe with a suffix); nothing from a request
/// reaches a path, and `name` is checked anyway so a bug cannot escape the tenant's folder.
public struct TenantFiles: Sendable {
    public enum Area: String, Sendable, CaseIterable {
        case partial
        case downloads
        case blobs
        /// Bodies of cached responses.
        case cache
        /// Bodies streamed with `PUT /v1/tasks/{id}/body`, on their way to the origin.
        case streams
    }

    public let root: String

    public init(dataDirectory: String) {
        self.root = (dataDirectory as NSString).appendingPathComponent("tenants")
    }

    public func directory(_ area: Area, tenantID: String) throws -> String {
        try Self.checkName(tenantID)
        return "\(root)/\(tenantID)/\(area.rawValue)"
    }

    public func path(_ area: Area, tenantID: String, name: String) throws -> String {
        try Self.checkName(name)
        return "\(try directory(area, tenantID: tenantID))/\(name)"
    }

    /// Creates the tenant's folders (mode 0700) if missing.
    public func createDirectories(tenantID: String) throws {
        for area in Area.allCases {
            try FileManager.default.createDirectory(
                atPath: try directory(area, tenantID: tenantID),
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
    }

    /// The partial file of a download that has no checkpoint naming another one.
    public static func partialName(taskID: String) -> String { "\(taskID).part" }

    /// The task whose own partial file `name` is (`partialName(taskID:)`): after resume data was
    /// adopted, another task's than the one that continues it.
    public static func taskID(ofPartialName name: String) -> String? {
        name.hasSuffix(".part") && name.count > 5 ? String(name.dropLast(5)) : nil
    }

    /// The spool file of a streamed upload body, and the marker written once it is complete
    /// (holding its length) or abandoned by the client.
    public static func streamName(taskID: String, generation: Int) -> String { "\(taskID).\(generation).body" }
    public static func streamDoneName(taskID: String, generation: Int) -> String { "\(taskID).\(generation).done" }
    public static func streamAbandonedName(taskID: String, generation: Int) -> String { "\(taskID).\(generation).abandoned" }

    /// A finished download's name.
    public static func downloadName(taskID: String) -> String { taskID }

    static func checkName(_ name: String) throws {
        let allowed = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
                return true
            default:
                return false
            }
        }
        guard allowed, !name.isEmpty, !name.hasPrefix("."), name.utf8.count <= 128 else {
            throw TenantFilesError.invalidName
        }
    }
}

public enum TenantFilesError: Error, CustomStringConvertible {
    case invalidName

    public var description: String { "a file name that Ferry did not make reached the file layer" }
}
