import Foundation

/// How a client private key in PEM is protected, read without decrypting it. Two facts matter
/// before libcurl may see a key: libcurl 7.88 dereferences a NULL password on every connect
/// with an encrypted key and no passphrase (curl issue 16806, fixed in 8.13), and it decrypts
/// the key on the worker thread for every new connection, so a costly key derivation stalls
/// every transfer of that worker (and the heartbeat that waits for it).
public struct PrivateKeyProtection: Equatable, Sendable {
    public enum Derivation: Equatable, Sendable {
        /// Not encrypted.
        case none
        /// The traditional `Proc-Type: 4,ENCRYPTED` form: OpenSSL's EVP_BytesToKey, one round.
        case traditional
        /// PBKDF2 (PBES2), or the iterated hashes of PBES1 and PKCS #12.
        case iterated(iterations: Int64)
        /// scrypt (RFC 7914) under PBES2.
        case scrypt(n: Int64, r: Int64, p: Int64)
    }

    /// The costliest derivation among the PEM's private key blocks.
    public var derivation: Derivation

    public var isEncrypted: Bool { derivation != .none }

    /// At most this many iterations: a tenth of a second of one core or less per connection.
    /// OpenSSL's own default is 2048.
    public static let maximumIterations: Int64 = 100_000
    /// scrypt: at most N·r·p = 2^20 block mixes (OpenSSL's `-scrypt` default is 2^17) …
    public static let maximumScryptWork: Int64 = 1 << 20
    /// … and at most 32 MiB of memory (128·N·r bytes), OpenSSL's own limit.
    public static let maximumScryptMemory: Int64 = 32 << 20

    public enum Failure: Error, Equatable {
        /// An `ENCRYPTED PRIVATE KEY` block that is not base64 of a PKCS #8 structure.
        case unreadable
        /// Encrypted with a scheme whose cost cannot be read here.
        case unsupportedScheme
    }

    /// Reads every private key block of `pem`.
    public init(pem: String) throws(Failure) {
        var costliest = Derivation.none
        for block in PEMBlock.all(in: pem) where block.label.hasSuffix("PRIVATE KEY") {
            let derivation: Derivation
            if block.label == "ENCRYPTED PRIVATE KEY" {
                guard let der = Data(base64Encoded: block.base64, options: .ignoreUnknownCharacters) else { throw .unreadable }
                derivation = try Self.pkcs8Derivation(Array(der))
            } else if block.headers.contains(where: { $0.lowercased().hasPrefix("proc-type:") && $0.uppercased().contains("ENCRYPTED") }) {
                derivation = .traditional
            } else {
                derivation = .none
            }
            if derivation.work > costliest.work || (costliest == .none && derivation != .none) { costliest = derivation }
        }
        self.derivation = costliest
    }

    /// Why decrypting this key is too costly to do for every connection; nil when it is not.
    public var excessiveCost: String? {
        switch derivation {
        case .none, .traditional:
            return nil
        case .iterated(let iterations):
            guard iterations > Self.maximumIterations else { return nil }
            return "is encrypted with \(iterations) key derivation iterations; at most \(Self.maximumIterations) are accepted, "
                + "since every connection decrypts the key (re-encrypt it, e.g. openssl pkcs8 -topk8 -iter 10000)."
        case .scrypt(let n, let r, let p):
            let (blocks, blocksOverflow) = n.multipliedReportingOverflow(by: r)
            let (memory, memoryOverflow) = blocks.multipliedReportingOverflow(by: 128)
            guard blocksOverflow || memoryOverflow || memory > Self.maximumScryptMemory || derivation.work > Self.maximumScryptWork else {
                return nil
            }
            return "is encrypted with scrypt N=\(n), r=\(r), p=\(p); at most N·r·p = \(Self.maximumScryptWork) "
                + "and \(Self.maximumScryptMemory >> 20) MiB are accepted, since every connection decrypts the key."
        }
    }

    // MARK: PKCS #8 EncryptedPrivateKeyInfo (RFC 5958 §3, RFC 8018)

    private static let pbes2: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0D]
    private static let pbkdf2: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
    private static let scrypt: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B]
    /// 1.2.840.113549.1.5.x, PBES1 (x = 1, 3, 4, 6, 10, 11).
    private static let pbes1Prefix: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05]
    /// 1.2.840.113549.1.12.1.x, PKCS #12 password-based encryption (x = 1…6).
    private static let pkcs12Prefix: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x0C, 0x01]

    /// `EncryptedPrivateKeyInfo ::= SEQUENCE { encryptionAlgorithm AlgorithmIdentifier, encryptedData OCTET STRING }`.
    private static func pkcs8Derivation(_ der: [UInt8]) throws(Failure) -> Derivation {
        do {
            var outer = DERReader(der[...])
            var info = DERReader(try outer.next(DERReader.sequence))
            var algorithm = DERReader(try info.next(DERReader.sequence))
            let oid = Array(try algorithm.next(DERReader.objectIdentifier))
            var parameters = DERReader(try algorithm.next(DERReader.sequence))
            if oid == pbes2 {
                // PBES2-params ::= SEQUENCE { keyDerivationFunc AlgorithmIdentifier, encryptionScheme AlgorithmIdentifier }
                var kdf = DERReader(try parameters.next(DERReader.sequence))
                let kdfOID = Array(try kdf.next(DERReader.objectIdentifier))
                var kdfParameters = DERReader(try kdf.next(DERReader.sequence))
                if kdfOID == pbkdf2 {
                    // PBKDF2-params ::= SEQUENCE { salt, iterationCount INTEGER, keyLength INTEGER OPTIONAL, prf … }
                    _ = try kdfParameters.next()
                    return .iterated(iterations: try kdfParameters.nonNegativeInteger())
                }
                if kdfOID == scrypt {
                    // scrypt-params ::= SEQUENCE { salt OCTET STRING, costParameter, blockSize, parallelizationParameter, keyLength OPTIONAL }
                    _ = try kdfParameters.next(DERReader.octetString)
                    let n = try kdfParameters.nonNegativeInteger()
                    let r = try kdfParameters.nonNegativeInteger()
                    let p = try kdfParameters.nonNegativeInteger()
                    return .scrypt(n: n, r: r, p: p)
                }
                throw Failure.unsupportedScheme
            }
            if (oid.count == pbes1Prefix.count + 1 && oid.starts(with: pbes1Prefix))
                || (oid.count == pkcs12Prefix.count + 1 && oid.starts(with: pkcs12Prefix)) {
                // PBEParameter ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER }
                _ = try parameters.next(DERReader.octetString)
                return .iterated(iterations: try parameters.nonNegativeInteger())
            }
            throw Failure.unsupportedScheme
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unreadable
        }
    }
}

extension PrivateKeyProtection.Derivation {
    /// A comparable measure of the work, saturating rather than trapping on hostile values.
    var work: Int64 {
        switch self {
        case .none: 0
        case .traditional: 1
        case .iterated(let iterations): iterations
        case .scrypt(let n, let r, let p):
            n.multipliedReportingOverflow(by: r).overflow ? .max
                : (n * r).multipliedReportingOverflow(by: p).overflow ? .max : n * r * p
        }
    }
}

/// One `-----BEGIN …-----` block of a PEM document, with its RFC 1421 header lines.
struct PEMBlock {
    var label: String
    var headers: [String]
    var base64: String

    static func all(in text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var current: PEMBlock?
        for rawLine in text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----"), line.count > 16 {
                current = PEMBlock(label: String(line.dropFirst(11).dropLast(5)), headers: [], base64: "")
            } else if line.hasPrefix("-----END ") {
                if let block = current { blocks.append(block) }
                current = nil
            } else if current != nil {
                if line.contains(":") { current?.headers.append(line) } else { current?.base64 += line }
            }
        }
        return blocks
    }
}
