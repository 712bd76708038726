import Credentials

/// One key of `LR_ACCESS_TOKEN_KEYS`: an id (carried in each token it signs) and 32 or more
/// random bytes.
public struct AccessTokenKey: Sendable, Equatable {
    public let id: UInt8
    public let secret: [UInt8]

    public init(id: UInt8, secret: [UInt8]) {
        precondition(secret.count >= 32, "an access-token key has at least 32 bytes")
        self.id = id
        self.secret = secret
    }
}

/// Access tokens a replica verifies without the database (issue 38).
///
/// The form is `lr_at_<tenant>_<claims>.<mac>`: the claims in unpadded base64url (a version,
/// the key's id, 16 random bytes, the user, the session, the expiry in Unix seconds, the
/// tenant's revocation epoch the issue read and the username), and the first 16 bytes of
/// HMAC-SHA-256 over everything before the dot, under the key the claims name.
///
/// HMAC, not a signature: the only party that verifies is the service itself, which holds
/// the keys anyway, and an HMAC costs about a microsecond where an Ed25519 or ECDSA check
/// costs 50 to 100. 256-bit keys; a tag of 128 bits leaves a forger one chance in 2^128 per
/// try (truncation as RFC 2104 and NIST SP 800-107 allow).
///
/// A signed token is also stored hashed, like every access token: a replica that cannot
/// verify it (an unknown key, a revocation it must check) looks it up as it does an opaque
/// one, so the database stays the authority and a rotation can lose no request.
struct AccessTokenSigner: Sendable {
    /// What a verified token says.
    struct Claims: Sendable, Equatable {
        let tenantID: Int64
        let userID: Int64
        let sessionID: Int64
        /// Unix seconds, by the database's clock when issued.
        let expires: Int64
        /// The tenant's revocation epoch read in the same snapshot as the checks.
        let epoch: Int64
        let username: String
    }

    static let prefix = SessionStore.accessTokenPrefix
    static let version: UInt8 = 1
    static let tagLength = 16
    /// The longest form: a 19-digit tenant and a 255-byte username.
    static let maximumLength = 400

    /// The first signs; all verify.
    let keys: [AccessTokenKey]

    init(keys: [AccessTokenKey]) {
        precondition(!keys.isEmpty, "signing needs a key")
        self.keys = keys
    }

    /// A token for these claims under the first key; nil for a username too long to carry
    /// (the caller issues an opaque token instead).
    func mint(_ claims: Claims) -> String? {
        let name = Array(claims.username.utf8)
        guard name.count <= 255, claims.tenantID > 0 else { return nil }
        let key = keys[0]
        var payload: [UInt8] = [Self.version, key.id]
        payload += Tokens.randomBytes(count: 16)
        for value in [claims.userID, claims.sessionID, claims.expires, claims.epoch] {
            withUnsafeBytes(of: value.bigEndian) { payload += $0 }
        }
        payload.append(UInt8(name.count))
        payload += name
        let signed = "\(Self.prefix)\(claims.tenantID)_\(Base64URL.encode(payload))"
        return signed + "." + Base64URL.encode(Self.tag(Array(signed.utf8), key: key))
    }

    /// The claims of `token` if one of the keys signed it exactly so; nil for any other
    /// string (an opaque token, another key, a changed or truncated one). Expiry is the
    /// caller's check.
    func verify(_ token: some StringProtocol) -> Claims? {
        guard let parts = Self.parts(of: token) else { return nil }
        let payload = parts.payload
        guard payload.count >= 51, payload[0] == Self.version, let key = keys.first(where: { $0.id == payload[1] }) else { return nil }
        guard Tokens.constantTimeEquals(Self.tag(parts.signed, key: key), parts.tag) else { return nil }
        func int64(at offset: Int) -> Int64 {
            payload[offset..<offset + 8].reduce(0) { $0 << 8 | Int64($1) }
        }
        let length = Int(payload[50])
        guard payload.count == 51 + length else { return nil }
        return Claims(
            tenantID: parts.tenantID, userID: int64(at: 18), sessionID: int64(at: 26), expires: int64(at: 34), epoch: int64(at: 42),
            username: String(decoding: payload[51...], as: UTF8.self))
    }

    /// The tenant a token of the signed form names, whoever signed it: for the lookup, which
    /// checks it against the stored hash and needs no key.
    static func tenantID(of token: some StringProtocol) -> Int64? {
        parts(of: token)?.tenantID
    }

    private struct Parts {
        let tenantID: Int64
        /// The bytes the tag covers: everything before the dot.
        let signed: [UInt8]
        let payload: [UInt8]
        let tag: [UInt8]
    }

    private static func parts(of token: some StringProtocol) -> Parts? {
        let bytes = Array(token.utf8)
        guard bytes.count <= maximumLength, bytes.starts(with: prefix.utf8),
            let dot = bytes.lastIndex(of: UInt8(ascii: ".")),
            let tag = Base64URL.decode(String(decoding: bytes[(dot + 1)...], as: UTF8.self)), tag.count == tagLength
        else { return nil }
        let head = bytes[prefix.utf8.count..<dot]
        guard let underscore = head.firstIndex(of: UInt8(ascii: "_")), let tenantID = Tokens.canonicalPositive(head[..<underscore]),
            let payload = Base64URL.decode(String(decoding: head[(underscore + 1)...], as: UTF8.self))
        else { return nil }
        return Parts(tenantID: tenantID, signed: Array(bytes[..<dot]), payload: payload, tag: tag)
    }

    private static func tag(_ message: [UInt8], key: AccessTokenKey) -> [UInt8] {
        Array(Tokens.hmacSHA256(key: key.secret, message: message).prefix(tagLength))
    }
}
