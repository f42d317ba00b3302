import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// The peer address curl is about to connect to, as plain bytes for policy checks.
public struct CurlSocketAddress: Sendable, CustomStringConvertible {
    public enum Family: Sendable {
        case ipv4
        case ipv6
    }

    public let family: Family
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let addressBytes: [UInt8]
    public let port: UInt16

    init?(_ address: UnsafeMutablePointer<curl_sockaddr>) {
        // `addr` is declared as a 16-byte `struct sockaddr`, but curl allocates `addrlen` bytes
        // so an IPv6 address follows in place; read it through a raw pointer.
        guard let offset = MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr) else { return nil }
        let raw = UnsafeRawPointer(address).advanced(by: offset)
        let length = Int(address.pointee.addrlen)
        switch address.pointee.family {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            let ipv4 = raw.loadUnaligned(as: sockaddr_in.self)
            family = .ipv4
            port = UInt16(bigEndian: ipv4.sin_port)
            addressBytes = withUnsafeBytes(of: ipv4.sin_addr) { Array($0) }
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            let ipv6 = raw.loadUnaligned(as: sockaddr_in6.self)
            family = .ipv6
            port = UInt16(bigEndian: ipv6.sin6_port)
            addressBytes = withUnsafeBytes(of: ipv6.sin6_addr) { Array($0) }
        default:
            return nil
        }
    }

    public init(family: Family, addressBytes: [UInt8], port: UInt16) {
        self.family = family
        self.addressBytes = addressBytes
        self.port = port
    }

    public var description: String {
        switch family {
        case .ipv4:
            return addressBytes.map(String.init).joined(separator: ".")
        case .ipv6:
            var groups: [String] = []
            for index in stride(from: 0, to: 16, by: 2) {
                groups.append(String(UInt16(addressBytes[index]) << 8 | UInt16(addressBytes[index + 1]), radix: 16))
            }
            return "[" + groups.joined(separator: ":") + "]"
        }
    }
}
