import Foundation

/// An HTTPS origin for TLS tests: `openssl s_server -www` with certificates made for the test
/// (a private CA, a server certificate for 127.0.0.1, an expired one, a client certificate).
/// `-www` answers any GET with a 200 status page.
public final class TLSOrigin: Sendable {
    public struct Certificates: Sendable {
        public let directory: String
        public let caPEM: String
        public let clientCertificatePEM: String
        public let clientKeyPEM: String
        public var caPath: String { directory + "/ca.pem" }

        /// The client key encrypted as PKCS #8 (PBES2, PBKDF2 with `iterations`, AES-256-CBC).
        public func encryptedClientKey(passphrase: String, iterations: Int) throws -> String {
            let output = "client-\(iterations).enc.key"
            try TLSOrigin.openssl([
                "pkcs8", "-topk8", "-in", "client.key", "-v2", "aes-256-cbc", "-iter", String(iterations),
                "-passout", "pass:\(passphrase)", "-out", output,
            ], in: directory)
            return try String(contentsOfFile: directory + "/" + output, encoding: .utf8)
        }
    }

    public let port: Int
    private let process: Process

    public var url: String { "https://127.0.0.1:\(port)/" }

    /// Starts a server with `certificate` ("server" or "expired") that, when
    /// `requiresClientCertificate`, demands a client certificate signed by the test CA.
    public init(_ certificates: Certificates, certificate: String = "server", requiresClientCertificate: Bool = false) throws {
        port = try Self.freePort()
        var arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-www", "-quiet",
            "-cert", "\(certificates.directory)/\(certificate).pem", "-key", "\(certificates.directory)/\(certificate).key",
        ]
        if requiresClientCertificate { arguments += ["-Verify", "1", "-CAfile", certificates.caPath] }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runOneAtATime()
        try waitUntilListening()
    }

    deinit {
        stop()
    }

    public func stop() {
        guard process.exitStatus == nil else { return }
        // s_server does not always leave on SIGTERM while it holds a connection.
        kill(process.processIdentifier, SIGKILL)
        process.waitForExitStatus()
    }

    /// Makes the CA and certificates once per directory. Suites keep theirs for the whole
    /// process, so the directory goes with the process's scratch root, not with an origin.
    public static func makeCertificates() throws -> Certificates {
        let directory = try TestScratch.folder(named: "tls")
        func openssl(_ arguments: [String]) throws {
            try TLSOrigin.openssl(arguments, in: directory)
        }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=Ferry Test CA"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: directory + "/client.ext", atomically: true, encoding: .utf8)
        for (name, subject, extensions) in [("server", "/CN=127.0.0.1", "server.ext"), ("client", "/CN=ferry-client", "client.ext")] {
            try openssl(["req"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", subject])
            try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                         "-out", "\(name).pem", "-days", "30", "-extfile", extensions])
        }
        // An expired server certificate, through `openssl ca`, the one command that takes explicit dates.
        try "".write(toFile: directory + "/index.txt", atomically: true, encoding: .utf8)
        try """
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            serial = ca.srl
            default_md = sha256
            policy = anything
            copy_extensions = copy
            [anything]
            commonName = supplied
            [server]
            subjectAltName = IP:127.0.0.1
            """.write(toFile: directory + "/ca.cnf", atomically: true, encoding: .utf8)
        try openssl(["req"] + ec + ["-keyout", "expired.key", "-out", "expired.csr", "-subj", "/CN=127.0.0.1"])
        try openssl(["ca", "-batch", "-config", "ca.cnf", "-extensions", "server", "-cert", "ca.pem", "-keyfile", "ca.key",
                     "-in", "expired.csr", "-out", "expired.pem", "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-notext"])
        return Certificates(
            directory: directory,
            caPEM: try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8),
            clientCertificatePEM: try String(contentsOfFile: directory + "/client.pem", encoding: .utf8),
            clientKeyPEM: try String(contentsOfFile: directory + "/client.key", encoding: .utf8)
        )
    }

    static func openssl(_ arguments: [String], in directory: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runOneAtATime()
        guard process.waitForExitStatus() == 0 else { throw TLSOriginError.openssl(arguments.joined(separator: " ")) }
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TLSOriginError.noPort }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func waitUntilListening() throws {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TLSOriginError.notListening
    }
}

public enum TLSOriginError: Error {
    case openssl(String)
    case noPort
    case notListening
}
