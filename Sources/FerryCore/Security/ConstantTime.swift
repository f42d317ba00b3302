/// Compares two byte strings in time that depends only on their lengths, never on where they
/// first differ, so that comparing a presented secret (key hash, webhook signature, resume data
/// MAC) with the expected one leaks nothing through timing.
///
/// Lengths are not secret here (hashes and MACs have fixed sizes), so unequal lengths answer
/// `false` at once.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices {
        difference |= a[index] ^ b[index]
    }
    return difference == 0
}
