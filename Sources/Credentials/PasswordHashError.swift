/// Why a password could not be hashed or a stored hash could not be used.
public enum PasswordHashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stored string is not in the `$scrypt$ln=…,r=…,p=…$salt$hash` format.
    case malformed(String)
    /// The parameters are outside the sanity limits of `ScryptParameters`.
    case unsupportedParameters(String)
    /// OpenSSL failed; carries its error queue as text.
    case crypto(String)

    public var description: String {
        switch self {
        case .malformed(let reason): "malformed password hash: \(reason)"
        case .unsupportedParameters(let reason): "unsupported scrypt parameters: \(reason)"
        case .crypto(let reason): "scrypt failed: \(reason)"
        }
    }
}
