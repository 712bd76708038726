/// A stored scrypt password hash and its self-describing text form.
///
/// Format (PHC-string style, close to passlib's `scrypt`):
///
///     $scrypt$ln=<logN>,r=<r>,p=<p>$<salt>$<hash>
///
/// for example `$scrypt$ln=17,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$…`, where
/// `<salt>` and `<hash>` are standard base64 (`+`, `/`) without `=` padding,
/// the salt and key lengths are those of the decoded bytes, and numbers are
/// plain decimal without sign or leading zeros. Because the string carries its
/// own parameters, they can be raised later and old hashes still verify (and
/// are upgraded via `PasswordHasher.needsRehash`).
public struct PasswordHash: Sendable, Equatable {
    /// The scrypt parameters; `keyLength` and `saltLength` match `hash` and `salt`.
    public var parameters: ScryptParameters
    /// The random salt.
    public var salt: [UInt8]
    /// The derived key.
    public var hash: [UInt8]

    /// Identifier between the first two `$`.
    public static let identifier = "scrypt"

    /// Wraps already computed values.
    public init(parameters: ScryptParameters, salt: [UInt8], hash: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.hash = hash
        self.parameters.saltLength = salt.count
        self.parameters.keyLength = hash.count
    }

    /// Parses the text form, throwing `PasswordHashError.malformed` for
    /// anything that does not match the format exactly and
    /// `.unsupportedParameters` for values outside the sanity limits (so a
    /// tampered row cannot make the server allocate gigabytes).
    public init(encoded: String) throws(PasswordHashError) {
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0].isEmpty else {
            throw .malformed("expected $scrypt$ln=…,r=…,p=…$salt$hash")
        }
        guard fields[1] == Self.identifier else {
            throw .malformed("unknown algorithm \"\(fields[1].prefix(32))\"")
        }
        let settings = fields[2].split(separator: ",", omittingEmptySubsequences: false)
        guard settings.count == 3 else { throw .malformed("expected ln=…,r=…,p=…") }
        let logN = try Self.number(settings[0], named: "ln")
        let r = try Self.number(settings[1], named: "r")
        let p = try Self.number(settings[2], named: "p")
        guard let salt = Base64Coder.standard.decode(fields[3]) else {
            throw .malformed("salt is not unpadded base64")
        }
        guard let hash = Base64Coder.standard.decode(fields[4]) else {
            throw .malformed("hash is not unpadded base64")
        }
        let parameters = ScryptParameters(logN: logN, r: r, p: p, keyLength: hash.count, saltLength: salt.count)
        try parameters.validate()
        self.init(parameters: parameters, salt: salt, hash: hash)
    }

    /// The text form described on the type.
    public var encoded: String {
        let settings = "ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)"
        return "$\(Self.identifier)$\(settings)$\(Base64Coder.standard.encode(salt))$\(Base64Coder.standard.encode(hash))"
    }

    /// Parses `name=<decimal>`; rejects signs, leading zeros and more than
    /// 4 digits so no value has two spellings and nothing can overflow.
    private static func number(_ setting: Substring, named name: String) throws(PasswordHashError) -> Int {
        guard setting.hasPrefix(name + "=") else { throw .malformed("expected \(name)=") }
        let digits = setting.dropFirst(name.count + 1)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            digits == "0" || !digits.hasPrefix("0"), let value = Int(digits)
        else {
            throw .malformed("\(name) is not a plain decimal number")
        }
        return value
    }
}
