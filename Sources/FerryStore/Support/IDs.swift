import FerryCore

/// Resource ids, made from the system's cryptographic random source.
enum IDs {
    static func make(_ prefix: String) -> String {
        var random = SystemRandomNumberGenerator()
        return ResourceID.make(prefix: prefix, using: &random)
    }
}
