/// Client private keys as tenants send them: fixtures made with OpenSSL 3 (`openssl pkcs8
/// -topk8 …`, `openssl ec -aes256`) from one throwaway P-256 key. Shared by the core's key
/// checks and the API's validation tests.
public enum PrivateKeyFixtures {
    public static let plain = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgoLmQs1TxRl73fNwg
YbxXhsy1PG3WyyznUTGbGWo3r3ehRANCAARsNVN/NdWSawsCBoqrxdUOtXyQZV5O
k63KqYJMrMa4foHdx5/IEdYZfuSnZiVDSqNlup9Y0bzy2Gd4+AyRcbOD
-----END PRIVATE KEY-----
"""
    /// PBES2, PBKDF2 with HMAC-SHA256, 2048 iterations (OpenSSL's default), AES-256-CBC.
    public static let pbkdf2Default = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjB4QT1ZhaUWgICCAAw
DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEOQ9n4b2CApdQJUw3GW6O3QEgZBJ
h21Z5Psc+tDl3bIYFOk65HrT227elH8cEWpFhEbg6daTF3ssTLSkxrs9tzRJNhCV
cEusShU1Ez2aF370zLE+mBulmRRjd4VVUpdv9zyJYfbISxcX0Mei000xD8Da7pgH
LrHx5kWjsc/qkNuuUu/05DmxlOEtJvgPp+QIbBjM14r8VhdHr3TLuJ2Bkig/6wI=
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PBES2, PBKDF2, 10,000,000 iterations: seconds of a worker thread per connection.
    public static let pbkdf2Huge = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHuMFkGCSqGSIb3DQEFDTBMMCsGCSqGSIb3DQEFDDAeBAgW1WR9BpXpAwIEAJiW
gDAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQ4Y4Utq42EaK9PZph92Lx3QSB
kMT8inl1iUQ7S7qqX+kEtU00STeQZ73eC3rzI3ueC0ZKw0d64CuxG2xANgIR9nX0
NU8D1sgFOOXsqTZOhRqgVFY9RwkWgtk+aqSlUpgyh6nbLjwVahEhwilJ27PixO2P
AKMkG0AjOE/1S7O0nbHih6XE0QTFFPshMWzILzJvkAIRsw8QWoM3VuA9SD6zu6k/
1g==
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PBES2 with scrypt N=16384, r=8, p=1.
    public static let scrypt = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIHkME8GCSqGSIb3DQEFDTBCMCEGCSsGAQQB2kcECzAUBAi9WiAptDrXmAICQAAC
AQgCAQEwHQYJYIZIAWUDBAEqBBAtwJMUKh7zBkVmiodgP9AnBIGQlbBrSBnVrK4c
c6Qj6fU5ShEYDZNZUBdLc9R2eG8OIIXR4FW4eXAFXD6H4BUqfagQAj32vy85io/q
vElpZehc/6oqhRO5OVDCzP9gW+dXPve+QKywC5lQxfjrhAOmveZYtPhJInMZA9Tr
72vAOLQ4TGqx7xDm/96NEFzYFEJI7knZe6hVa5H+J5NAByNykgb4
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// PKCS #12 pbeWithSHA1And3-KeyTripleDES-CBC, 5,000,000 iterations.
    public static let pkcs12Huge = """
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIGyMB0GCiqGSIb3DQEMAQMwDwQIjOFKDZ75HRsCA0xLQASBkJzepti9xbQxPsIz
x71qlJfKfv5KT0xPR4L59dy5tnrSOLU6Ip8weTpIibPIrneFUz3EUtnaT+E33xOJ
iz40+nh7PaQcK0WAdUl1JCyQMnKRh+fl623HVQEFl4mKyZK1A2Womf5mmHD4un9U
C9QQ7yUG++jPutG6MqYW9k8jX82hEQLgFgpeKZFIk5uliyfxbQ==
-----END ENCRYPTED PRIVATE KEY-----
"""
    /// The traditional OpenSSL form, `Proc-Type: 4,ENCRYPTED`.
    public static let traditional = """
-----BEGIN EC PRIVATE KEY-----
Proc-Type: 4,ENCRYPTED
DEK-Info: AES-256-CBC,BA28214B05D3BAC9DEE6E50DBAF7BEFE

rdpBYMUgla+5gnIWLsxaQBfTlaNfJRaMrQjuFwf1F9JfFoELty9OAXw/I8eewGig
X85knPlDBzCsBz7mwTZk9crIb34Xne5yggvD1y7PUKj6hi2ezquuALL74p0UKLzl
FXRAN86aUfP+uJk/iEGp/Ah0R2GoyNdOToaEKBmg4kg=
-----END EC PRIVATE KEY-----
"""
}
