import FerryCore

/// Resource ids, made from the system's cryptographic random source.
public enum IDs {
    public static func make(_ prefix: String) -> String {
        var random = SystemRandomNumberGenerator()
        return ResourceID.make(prefix: prefix, using: &random)
    }
}
